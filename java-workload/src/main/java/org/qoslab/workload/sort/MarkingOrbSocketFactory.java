package org.qoslab.workload.sort;

import com.sun.corba.ee.spi.orb.ORB;
import com.sun.corba.ee.spi.transport.Acceptor;
import com.sun.corba.ee.spi.transport.ORBSocketFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The GlassFish ORB's socket factory with DSCP marking (property
 * {@code com.sun.corba.ee.transport.ORBSocketFactoryClass}, set by {@link Orbs}): the same
 * sockets as the ORB's {@code DefaultSocketFactoryImpl} (NIO channels, no Nagle) but IPv4
 * channels with {@code IP_TOS = dscp << 2} set before {@code connect}, so the SYN is marked, and
 * every accepted connection marked. The ORB instantiates this class by name, so the DSCP is a
 * JVM-wide setting ({@link #setDscp}, -1 = unmarked), like the RMI reply timeout.
 */
public final class MarkingOrbSocketFactory implements ORBSocketFactory {
    private static volatile int dscp = -1;

    /** The DSCP (0..63, -1 = leave the ToS byte alone) of every ORB socket created from now on. */
    public static void setDscp(int value) {
        if (value < -1 || value > 63) throw new IllegalArgumentException("DSCP must be 0..63, got " + value);
        dscp = value;
    }

    @Override
    public void setORB(ORB orb) {
        // nothing of the ORB is needed
    }

    @Override
    public ServerSocket createServerSocket(String type, InetSocketAddress address) throws IOException {
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.INET);
        ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        ch.bind(address, 64);
        return ch.socket();
    }

    @Override
    public Socket createSocket(String type, InetSocketAddress address) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.INET);
        try {
            int d = dscp;
            if (d >= 0) ch.setOption(StandardSocketOptions.IP_TOS, d << 2);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.connect(address);
            return ch.socket();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    public void setAcceptedSocketOptions(Acceptor acceptor, ServerSocket server, Socket socket) throws SocketException {
        socket.setTcpNoDelay(true);
        int d = dscp;
        if (d >= 0) {
            try {
                socket.getChannel().setOption(StandardSocketOptions.IP_TOS, d << 2);
            } catch (IOException e) {
                throw new SocketException("cannot mark an accepted IIOP connection: " + e.getMessage());
            }
        }
    }
}
