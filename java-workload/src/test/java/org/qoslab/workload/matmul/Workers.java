package org.qoslab.workload.matmul;

import java.net.DatagramSocket;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** In-process matmul workers on loopback, each on its own free ports. */
final class Workers implements AutoCloseable {
    final List<MatmulWorker> workers = new ArrayList<>();
    final List<WorkerAddr> addrs = new ArrayList<>();

    static int freeTcp() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) { return s.getLocalPort(); }
    }

    static int freeUdp() throws Exception {
        try (DatagramSocket s = new DatagramSocket(0)) { return s.getLocalPort(); }
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
            w.addrs.add(new WorkerAddr("w" + i, "127.0.0.1", o.registryPort, o.socketPort, o.datagramPort));
        }
        return w;
    }

    List<WorkerAddr> first(int k) { return new ArrayList<>(addrs.subList(0, k)); }

    int pendingStrips() { return workers.stream().mapToInt(MatmulWorker::pendingStrips).sum(); }

    @Override public void close() { for (MatmulWorker w : workers) w.close(); }
}
