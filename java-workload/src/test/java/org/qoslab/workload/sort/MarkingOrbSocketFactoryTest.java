package org.qoslab.workload.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The ORB's sockets carry the DSCP: connected ones from before connect, accepted ones once the ORB sets their options. */
class MarkingOrbSocketFactoryTest {
    @AfterEach
    void unmark() {
        MarkingOrbSocketFactory.setDscp(-1);
    }

    @Test
    void client_and_accepted_iiop_sockets_carry_the_dscp() throws Exception {
        MarkingOrbSocketFactory.setDscp(40);
        MarkingOrbSocketFactory f = new MarkingOrbSocketFactory();
        try (ServerSocket server = f.createServerSocket("IIOP_CLEAR_TEXT", new InetSocketAddress("127.0.0.1", 0));
             Socket client = f.createSocket("IIOP_CLEAR_TEXT", new InetSocketAddress("127.0.0.1", server.getLocalPort()));
             Socket accepted = server.accept()) {
            assertEquals(40 << 2, client.getChannel().getOption(StandardSocketOptions.IP_TOS), "ToS 0xa0 on the client");
            assertTrue(client.getTcpNoDelay());
            f.setAcceptedSocketOptions(null, server, accepted);
            assertEquals(40 << 2, accepted.getChannel().getOption(StandardSocketOptions.IP_TOS), "ToS 0xa0 on the server side");
        }
    }

    @Test
    void unmarked_leaves_the_tos_alone_and_a_bad_dscp_is_refused() throws Exception {
        MarkingOrbSocketFactory f = new MarkingOrbSocketFactory();
        try (ServerSocket server = f.createServerSocket("IIOP_CLEAR_TEXT", new InetSocketAddress("127.0.0.1", 0));
             Socket client = f.createSocket("IIOP_CLEAR_TEXT", new InetSocketAddress("127.0.0.1", server.getLocalPort()))) {
            assertEquals(0, client.getChannel().getOption(StandardSocketOptions.IP_TOS));
        }
        assertThrows(IllegalArgumentException.class, () -> MarkingOrbSocketFactory.setDscp(64));
    }
}
