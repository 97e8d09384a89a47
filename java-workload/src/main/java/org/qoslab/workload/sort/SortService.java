package org.qoslab.workload.sort;

import java.rmi.Remote;
import java.rmi.RemoteException;

/**
 * The sort server over RMI (reference 002, section 6): the same three steps as the CORBA
 * interface ({@code src/main/idl/sort.idl}) and the socket protocol ({@link SortServer}).
 * A session is the client's random 64-bit id; the server keeps one part per session.
 */
public interface SortService extends Remote {
    /** Keep {@code part} under {@code session} (the distribute phase). */
    void put(long session, int[] part) throws RemoteException;

    /** Sort the session's part in place; returns the server's sort time in nanoseconds. */
    long sort(long session) throws RemoteException;

    /** The session's sorted part, forgotten by the server afterwards (the collect phase). */
    int[] take(long session) throws RemoteException;
}
