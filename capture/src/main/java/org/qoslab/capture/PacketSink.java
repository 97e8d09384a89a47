package org.qoslab.capture;

import java.nio.ByteBuffer;

/** Receives the packets of a capture source. */
public interface PacketSink {
    /**
     * One packet. {@code buf} positions are absolute; bytes {@code [offset, offset+capLen)} are the
     * captured frame; it is only valid during the call.
     *
     * @param tsNanos capture time, nanoseconds since the epoch
     * @param linkType pcap LINKTYPE_* of the frame (1 Ethernet, 113 Linux cooked, 101 raw IP, 276 cooked v2)
     * @param origLen length of the frame on the wire (bytes)
     */
    void packet(long tsNanos, int linkType, ByteBuffer buf, int offset, int capLen, int origLen);
}
