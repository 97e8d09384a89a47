package org.qoslab.workload.matmul;

/**
 * Where one matmul worker listens: a name for messages, its address, and a port per mechanism:
 * RMI registry ({@code rmi-*}), TCP ({@code socket}), UDP ({@code datagram}). On the command line
 * a worker is {@code [NAME=]ADDRESS[:BASE]} and its ports follow from the base port:
 * registry = BASE, RMI export = BASE + 1, socket = BASE + 2, datagram = BASE + 3.
 */
public final class WorkerAddr {
    public static final int DEFAULT_BASE = 1200;
    public static final int EXPORT_OFFSET = 1, SOCKET_OFFSET = 2, DATAGRAM_OFFSET = 3;

    public final String name, host;
    public final int rmiPort, socketPort, datagramPort;

    public WorkerAddr(String name, String host, int rmiPort, int socketPort, int datagramPort) {
        this.name = name; this.host = host;
        this.rmiPort = rmiPort; this.socketPort = socketPort; this.datagramPort = datagramPort;
    }

    /** The ports of a worker started with base port {@code base}. */
    public static WorkerAddr ofBase(String name, String host, int base) {
        return new WorkerAddr(name, host, base, base + SOCKET_OFFSET, base + DATAGRAM_OFFSET);
    }

    /** {@code jp-3=198.18.0.3:1200}, {@code 198.18.0.3} (base {@code defaultBase}), ... */
    public static WorkerAddr parse(String spec, int defaultBase) {
        int eq = spec.indexOf('=');
        String name = eq < 0 ? null : spec.substring(0, eq).trim(), addr = spec.substring(eq + 1).trim();
        int base = defaultBase, colon = addr.lastIndexOf(':');
        if (colon > 0) {
            try {
                base = Integer.parseInt(addr.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad worker " + spec + ": port is not a number");
            }
            addr = addr.substring(0, colon);
        }
        if (addr.isEmpty()) throw new IllegalArgumentException("bad worker " + spec + ": no address");
        if (base < 1 || base + DATAGRAM_OFFSET > 65535) throw new IllegalArgumentException("bad worker " + spec + ": base port out of range");
        return ofBase(name == null || name.isEmpty() ? addr : name, addr, base);
    }

    /** The port of {@code mechanism} on this worker. */
    public int port(String mechanism) {
        switch (mechanism) {
            case "rmi-serializable": case "rmi-externalizable": case "rmi": return rmiPort;
            case "socket": return socketPort;
            case "datagram": return datagramPort;
            default: throw new IllegalArgumentException("unknown mechanism " + mechanism);
        }
    }

    @Override public String toString() { return name.equals(host) ? host : name + " (" + host + ")"; }
}
