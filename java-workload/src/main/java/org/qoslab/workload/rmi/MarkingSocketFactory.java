package org.qoslab.workload.rmi;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMIServerSocketFactory;
import java.util.concurrent.atomic.LongAdder;

/**
 * RMI socket factory for both ends of every RMI connection (registry included): sets the IP ToS
 * byte to {@code dscp << 2} on client and accepted server sockets when a DSCP is given, applies a
 * connect timeout, and counts bytes sent/received by this JVM.
 *
 * <p>DSCP marking only reaches IPv4 packets when the JVM runs with
 * {@code -Djava.net.preferIPv4Stack=true} (docs/DESIGN.md field notes: with dual-stack sockets
 * setTrafficClass is silently ignored for IPv4); {@link #checkIpv4Stack} enforces it.
 */
public final class MarkingSocketFactory implements RMIClientSocketFactory, RMIServerSocketFactory, Serializable {
    private static final long serialVersionUID = 1L;

    /** Bytes written to / read from RMI sockets made by this factory in this JVM. */
    public static final LongAdder BYTES_SENT = new LongAdder(), BYTES_RECEIVED = new LongAdder();
    /**
     * The same counts for the current thread: {sent, received}. JRMP writes a call and reads its
     * return on the calling thread, so the change across one remote call is that call's request and
     * reply bytes on the wire (TCP payload, JRMP headers included; a new connection's handshake and a
     * DGC dirty call made while unmarshalling a stub count too).
     */
    public static final ThreadLocal<long[]> THREAD_BYTES = ThreadLocal.withInitial(() -> new long[2]);

    private final int dscp;            // -1: leave the ToS byte alone
    private final int connectTimeoutMs;
    private final String bindAddress;  // server sockets listen on this address only (null = all)

    /**
     * @param dscp DSCP 0..63, or -1 for no marking
     * @param connectTimeoutMs TCP connect timeout in milliseconds (> 0)
     */
    public MarkingSocketFactory(int dscp, int connectTimeoutMs) { this(dscp, connectTimeoutMs, null); }

    /**
     * @param bindAddress address server sockets listen on (a worker's own address, so several
     *        workers can share one machine on different addresses); null = all addresses
     */
    public MarkingSocketFactory(int dscp, int connectTimeoutMs, String bindAddress) {
        if (dscp < -1 || dscp > 63) throw new IllegalArgumentException("DSCP must be 0..63, got " + dscp);
        this.dscp = dscp;
        this.connectTimeoutMs = connectTimeoutMs;
        this.bindAddress = bindAddress;
    }

    public int dscp() { return dscp; }

    /** Throws IllegalStateException when marking is asked for but the JVM is not IPv4-only. */
    public static void checkIpv4Stack(int dscp) {
        if (dscp >= 0 && !Boolean.getBoolean("java.net.preferIPv4Stack"))
            throw new IllegalStateException("--dscp needs -Djava.net.preferIPv4Stack=true on every JVM "
                    + "(setTrafficClass is ignored for IPv4 on dual-stack sockets)");
    }

    private void mark(Socket s) throws IOException {
        if (dscp >= 0) s.setTrafficClass(dscp << 2);
        s.setTcpNoDelay(true);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = new CountingSocket();
        mark(s); // before connect, so the SYN is marked too
        s.connect(new InetSocketAddress(host, port), connectTimeoutMs);
        return s;
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        java.net.InetAddress bind = bindAddress == null ? null : java.net.InetAddress.getByName(bindAddress);
        return new ServerSocket(port, 50, bind) {
            @Override
            public Socket accept() throws IOException {
                Socket s = new CountingSocket();
                implAccept(s);
                mark(s);
                return s;
            }
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MarkingSocketFactory && ((MarkingSocketFactory) o).dscp == dscp
                && ((MarkingSocketFactory) o).connectTimeoutMs == connectTimeoutMs
                && java.util.Objects.equals(((MarkingSocketFactory) o).bindAddress, bindAddress);
    }

    @Override
    public int hashCode() { return java.util.Objects.hash(dscp, connectTimeoutMs, bindAddress); }

    /** A socket whose streams count bytes into BYTES_SENT / BYTES_RECEIVED. */
    private static final class CountingSocket extends Socket {
        private InputStream in;
        private OutputStream out;

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) in = new FilterInputStream(super.getInputStream()) {
                @Override public int read() throws IOException {
                    int b = super.read(); if (b >= 0) { BYTES_RECEIVED.increment(); THREAD_BYTES.get()[1]++; } return b;
                }
                @Override public int read(byte[] buf, int off, int len) throws IOException {
                    int n = super.read(buf, off, len); if (n > 0) { BYTES_RECEIVED.add(n); THREAD_BYTES.get()[1] += n; } return n;
                }
            };
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) out = new FilterOutputStream(super.getOutputStream()) {
                @Override public void write(int b) throws IOException { out.write(b); BYTES_SENT.increment(); THREAD_BYTES.get()[0]++; }
                @Override public void write(byte[] buf, int off, int len) throws IOException {
                    out.write(buf, off, len); BYTES_SENT.add(len); THREAD_BYTES.get()[0] += len;
                }
            };
            return out;
        }
    }
}
