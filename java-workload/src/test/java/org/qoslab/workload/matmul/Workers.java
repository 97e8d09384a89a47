package org.qoslab.workload.matmul;

import java.util.ArrayList;
import java.util.List;

/** In-process matmul workers on loopback, each on its own free ports. */
final class Workers implements AutoCloseable {
    final List<MatmulWorker> workers = new ArrayList<>();
    final List<WorkerAddr> addrs = new ArrayList<>();
    final List<MatmulWorker.Options> options = new ArrayList<>();

    static int freeTcp() throws Exception {
        return org.qoslab.workload.TestPorts.freeTcp();
    }

    static int freeUdp() throws Exception {
        return org.qoslab.workload.TestPorts.freeUdp();
    }

    static Workers start(int count, int dscp) throws Exception {
        Workers w = new Workers();
        for (int i = 0; i < count; i++) {
            MatmulWorker.Options o = new MatmulWorker.Options();
            o.advertise = "127.0.0.1";
            o.registryPort = freeTcp();
            o.exportPort = freeTcp();
            o.socketPort = freeTcp();
            o.datagramPort = freeUdp();
            o.dscp = dscp;
            o.connectTimeoutMs = 2000;
            w.workers.add(MatmulWorker.start(o));
            w.options.add(o);
            w.addrs.add(new WorkerAddr("w" + i, "127.0.0.1", o.registryPort, o.socketPort, o.datagramPort));
        }
        return w;
    }

    /** Stop worker i and start a new one on the same ports (a pool renewing a worker JVM). */
    void restart(int i) throws Exception {
        workers.get(i).close();
        Exception last = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            try {
                workers.set(i, MatmulWorker.start(options.get(i)));
                return;
            } catch (java.net.BindException | java.rmi.server.ExportException e) {
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }

    List<WorkerAddr> first(int k) { return new ArrayList<>(addrs.subList(0, k)); }

    int pendingStrips() { return workers.stream().mapToInt(MatmulWorker::pendingStrips).sum(); }

    @Override public void close() { for (MatmulWorker w : workers) w.close(); }
}
