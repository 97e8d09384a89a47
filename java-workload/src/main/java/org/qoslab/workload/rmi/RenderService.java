package org.qoslab.workload.rmi;

import java.rmi.Remote;
import java.rmi.RemoteException;
import org.qoslab.workload.render.Scene;

/** The remote render service each worker JVM exports and binds in its RMI registry. */
public interface RenderService extends Remote {
    /** Registry name under which a worker binds its service. */
    String NAME = "qoslab-render";

    /** Receive the scene once per run and prepare a renderer for a {@code width} x {@code width} image
     * tracing {@code rays} rays per pixel on the sub-pixel grid of {@code render.Rays.grid} (1 = the JGF
     * benchmark; k * k = supersample k). */
    void prepare(Scene scene, int width, int rays) throws RemoteException;

    /**
     * Render the given rows (0-based, each in 0..width-1) of the prepared scene.
     *
     * @param codec {@code "serializable"} or {@code "externalizable"}: how the returned pixels travel
     * @return the rows' pixels (row-major, in the order asked), their checksum and the render time
     * @throws RemoteException also when {@link #prepare} was not called or a row is out of range
     */
    RowBlock render(int[] rows, String codec) throws RemoteException;

    /** Host address and JVM of the worker, for logs. */
    String describe() throws RemoteException;
}
