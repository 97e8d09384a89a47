package org.qoslab.workload.matmul;

import static org.junit.jupiter.api.Assertions.*;

import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * DSCP marking on every mechanism: the ToS byte (DSCP << 2) of the sockets the manager and the
 * workers actually use, read back with getTrafficClass(); and marked runs still validate.
 */
class DscpTest {
    static final int WORKER_DSCP = 40, MANAGER_DSCP = 46;

    @Test
    void everyMechanismMarksItsSockets() throws Exception {
        try (Workers ws = Workers.start(2, WORKER_DSCP)) {
            // datagram: the workers' UDP sockets (data and acks leave through them)
            for (MatmulWorker w : ws.workers)
                assertEquals(WORKER_DSCP << 2, w.datagramEndpoint().channel().socket().getTrafficClass());

            // socket: the manager's connections, the workers' listeners and accepted sockets
            try (MechanismClient.Stream s = (MechanismClient.Stream) MechanismClient.open("socket", ws.addrs, MANAGER_DSCP, 2000, 30_000)) {
                s.hello(0);
                s.hello(1);
                List<SocketChannel> mine = s.channels();
                assertEquals(2, mine.size());
                for (SocketChannel ch : mine) assertEquals(MANAGER_DSCP << 2, ch.socket().getTrafficClass());
                int seen = 0;
                for (MatmulWorker w : ws.workers) {
                    // the listener is marked too: its SYN-ACKs and the accepted sockets inherit the ToS
                    assertEquals(WORKER_DSCP << 2, w.listener().getOption(java.net.StandardSocketOptions.IP_TOS));
                    for (Socket sk : w.tcpSockets()) { assertEquals(WORKER_DSCP << 2, sk.getTrafficClass()); seen++; }
                }
                assertEquals(2, seen, "one accepted connection per worker");
            }
            // a tile's links to its neighbours are made the same way, marked before connect
            WorkerAddr a0 = ws.addrs.get(0);
            try (SocketChannel ch = org.qoslab.workload.net.Marked.connect(
                    new java.net.InetSocketAddress(a0.host, a0.socketPort), WORKER_DSCP, 2000)) {
                assertEquals(WORKER_DSCP << 2, ch.socket().getTrafficClass());
            }
            MatmulManager.Config c = new MatmulManager.Config();
            c.workers = ws.addrs;
            c.n = 20;
            c.dscp = MANAGER_DSCP;

            // datagram manager endpoint
            try (MechanismClient.Datagram d = (MechanismClient.Datagram) MechanismClient.open("datagram", ws.addrs, MANAGER_DSCP, 2000, 30_000)) {
                assertEquals(MANAGER_DSCP << 2, d.endpoint().channel().socket().getTrafficClass());
                d.hello(0);
            }

            // RMI: the factory of the manager's registry connection and of the workers' exported stubs
            MarkingSocketFactory f = new MarkingSocketFactory(MANAGER_DSCP, 2000);
            try (Socket sock = f.createSocket("127.0.0.1", ws.addrs.get(0).rmiPort)) {
                assertEquals(MANAGER_DSCP << 2, sock.getTrafficClass());
            }

            // every mechanism, both algorithms, marked on both ends: still the right product
            for (String mech : MechanismClient.MECHANISMS) {
                for (String alg : MatmulManager.ALGORITHMS) {
                    c.mechanism = mech;
                    c.algorithm = alg;
                    Map<String, Object> r = MatmulManager.run(c);
                    assertEquals(Boolean.TRUE, r.get("valid"), mech + " " + alg);
                    assertEquals(MANAGER_DSCP, r.get("dscp"));
                }
            }
        }
    }

    @Test
    void unmarkedLeavesTheTosAlone() throws Exception {
        try (Workers ws = Workers.start(1, -1)) {
            assertEquals(0, ws.workers.get(0).datagramEndpoint().channel().socket().getTrafficClass());
        }
        assertThrows(IllegalArgumentException.class, () -> org.qoslab.workload.net.Marked.checkDscp(64));
    }
}
