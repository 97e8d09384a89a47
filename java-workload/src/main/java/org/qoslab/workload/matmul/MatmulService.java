package org.qoslab.workload.matmul;

import java.rmi.Remote;
import java.rmi.RemoteException;

/**
 * The remote interface of the {@code rmi-serializable} and {@code rmi-externalizable}
 * mechanisms (one interface; the payload's class picks the marshalling) and of the RMI pingpong.
 */
public interface MatmulService extends Remote {
    /** Registry name under which a matmul worker binds its service. */
    String NAME = "qoslab-matmul";

    /** SPA: multiply a band of A by B; the reply has the payload's class. */
    MatrixNode spa(MatrixNode task) throws RemoteException;

    /** MCA: run one tile (pushing strips to its neighbours' services) and return its C block. */
    MatrixNode mca(TilePlan plan, MatrixNode blocks) throws RemoteException;

    /** A neighbour's strip for one of this worker's tiles. */
    void push(MatrixNode strip) throws RemoteException;

    /** Pingpong: the payload back. */
    byte[] echo(byte[] payload) throws RemoteException;

    /** Host and JVM, for logs (also the manager's "are you there" call). */
    String describe() throws RemoteException;
}
