package org.qoslab.workload;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import org.qoslab.workload.rmi.RenderService;
import org.qoslab.workload.rmi.RenderServiceImpl;

/** A worker JVM: exports the render service on a fixed port and binds it in its own RMI registry. */
public final class Worker {
    private Worker() { }

    /**
     * Start serving; returns once the service is bound (RMI threads keep the JVM alive).
     *
     * @param advertise address the stub advertises (java.rmi.server.hostname); must be this node's
     * @param registryPort registry TCP port (JRMP; 1099 is the IANA rmiregistry port)
     * @param exportPort TCP port of the exported render service (fixed so a profile can match it)
     * @param dscp DSCP for all RMI sockets, -1 for none
     * @return the registry (kept so it is not garbage-collected)
     */
    public static Registry serve(String advertise, int registryPort, int exportPort, int dscp, int connectTimeoutMs)
            throws Exception {
        MarkingSocketFactory.checkIpv4Stack(dscp);
        if (advertise != null) System.setProperty("java.rmi.server.hostname", advertise);
        MarkingSocketFactory f = new MarkingSocketFactory(dscp, connectTimeoutMs, advertise);
        RenderServiceImpl impl = new RenderServiceImpl((advertise == null ? "?" : advertise) + " java "
                + System.getProperty("java.version"));
        RenderService stub = (RenderService) UnicastRemoteObject.exportObject(impl, exportPort, f, f);
        Registry reg = LocateRegistry.createRegistry(registryPort, f, f);
        reg.rebind(RenderService.NAME, stub);
        KEEP.add(impl);
        KEEP.add(reg);
        return reg;
    }

    private static final java.util.List<Object> KEEP = new java.util.concurrent.CopyOnWriteArrayList<>();
}
