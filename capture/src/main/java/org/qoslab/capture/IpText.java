package org.qoslab.capture;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * IP addresses between text and the classifier's numbers: IPv4 as a big-endian int, IPv6 as two
 * big-endian longs. Pure (literals only: never a name lookup).
 */
public final class IpText {
    private IpText() { }

    /** "198.18.0.1" -> int (big-endian); IllegalArgumentException naming the text otherwise. */
    public static int ipToInt(String ip) {
        String[] p = ip.split("\\.");
        if (p.length != 4) throw new IllegalArgumentException("not an IPv4 address: " + ip);
        int v = 0;
        for (String s : p) {
            int o;
            try {
                o = Integer.parseInt(s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an IPv4 address: " + ip);
            }
            if (o < 0 || o > 255) throw new IllegalArgumentException("not an IPv4 address: " + ip);
            v = (v << 8) | o;
        }
        return v;
    }

    /** An IPv6 literal -> its 16 bytes; IllegalArgumentException naming the text otherwise. */
    public static byte[] ipv6Bytes(String ip) {
        if (!ip.matches("[0-9a-fA-F:.]+")) throw new IllegalArgumentException("not an IP address: " + ip);
        try {
            byte[] a = InetAddress.getByName(ip).getAddress(); // a literal: no name lookup
            if (a.length != 16) throw new IllegalArgumentException("not an IPv6 address: " + ip);
            return a;
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ip);
        }
    }

    /** int (big-endian) -> "198.18.0.1". */
    public static String intToIp(int v) {
        return ((v >>> 24) & 0xFF) + "." + ((v >>> 16) & 0xFF) + "." + ((v >>> 8) & 0xFF) + "." + (v & 0xFF);
    }

    /** Two big-endian longs -> the IPv6 text form ("" cannot happen for 16 bytes). */
    public static String ip6ToString(long hi, long lo) {
        byte[] a = ByteBuffer.allocate(16).putLong(hi).putLong(lo).array();
        try {
            return InetAddress.getByAddress(a).getHostAddress();
        } catch (UnknownHostException e) {
            return "";
        }
    }

    /** An endpoint as text: {@code 198.18.0.1:40000} or {@code [2001:db8::1]:40000}. */
    public static String endpoint(int ipVersion, int v4, long hi, long lo, int port) {
        StringBuilder sb = new StringBuilder(48);
        if (ipVersion == 4) sb.append(intToIp(v4));
        else sb.append('[').append(ip6ToString(hi, lo)).append(']');
        return sb.append(':').append(port).toString();
    }
}
