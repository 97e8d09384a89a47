package org.qoslab.workload.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;

/**
 * Sockets of the {@code socket} and {@code datagram} mechanisms, DSCP-marked when asked.
 *
 * <p>They are IPv4 channels ({@link StandardProtocolFamily#INET}) with {@code IP_TOS = dscp << 2}:
 * the marking reaches IPv4 packets whether or not the JVM runs with
 * {@code -Djava.net.preferIPv4Stack=true} (DESIGN.md field notes: on the default dual-stack
 * sockets {@code setTrafficClass} silently does nothing for IPv4). Client sockets are marked
 * before {@code connect}, so the SYN carries the mark. The listener ({@link #listen}) is a classic
 * marked {@code ServerSocket}: see there.
 */
public final class Marked {
    private Marked() { }

    /** Check a DSCP value: 0..63, or -1 for "leave the ToS byte alone". */
    public static int checkDscp(int dscp) {
        if (dscp < -1 || dscp > 63) throw new IllegalArgumentException("DSCP must be 0..63, got " + dscp);
        return dscp;
    }

    /** A connected, marked TCP socket (no Nagle), blocking, with a connect timeout. */
    public static SocketChannel connect(InetSocketAddress to, int dscp, int connectTimeoutMs) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.INET);
        try {
            mark(ch, dscp);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.socket().connect(to, connectTimeoutMs);
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * A listening TCP socket on {@code bind}:{@code port} (null = all addresses), itself marked:
     * Linux gives its ToS to the SYN-ACKs it sends ({@code tcp_reflect_tos} = 0) and to the
     * connections it accepts, so even the ACKs the kernel sends before {@code accept} returns are
     * marked. (A {@code ServerSocketChannel} has no IP_TOS option; a classic {@code ServerSocket}
     * has, and it reaches IPv4 packets when the JVM runs with {@code -Djava.net.preferIPv4Stack=true},
     * which the CLI requires for {@code --dscp}.)
     */
    public static ServerSocket listen(String bind, int port, int dscp) throws IOException {
        ServerSocket ss = new ServerSocket();
        try {
            ss.setReuseAddress(true);
            if (dscp >= 0) ss.setOption(StandardSocketOptions.IP_TOS, checkDscp(dscp) << 2);
            ss.bind(new InetSocketAddress(bind == null ? null : InetAddress.getByName(bind), port), 64);
            return ss;
        } catch (IOException | RuntimeException e) {
            ss.close();
            throw e;
        }
    }

    /** Mark an accepted TCP socket (again: the listener's mark is inherited) and turn Nagle off. */
    public static Socket accepted(Socket s, int dscp) throws IOException {
        if (dscp >= 0) s.setTrafficClass(checkDscp(dscp) << 2);
        s.setTcpNoDelay(true);
        return s;
    }

    /** A bound, marked UDP socket (port 0 = any). */
    public static DatagramChannel datagram(String bind, int port, int dscp) throws IOException {
        DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET);
        try {
            if (dscp >= 0) ch.setOption(StandardSocketOptions.IP_TOS, dscp << 2);
            try {
                ch.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
                ch.setOption(StandardSocketOptions.SO_SNDBUF, 1 << 20);
            } catch (IOException ignored) {
                // the kernel caps buffers at net.core.[rw]mem_max; stop-and-wait needs little
            }
            ch.bind(new InetSocketAddress(bind == null ? null : InetAddress.getByName(bind), port));
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static void mark(SocketChannel ch, int dscp) throws IOException {
        if (dscp >= 0) ch.setOption(StandardSocketOptions.IP_TOS, checkDscp(dscp) << 2);
    }
}
