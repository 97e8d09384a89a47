package org.qoslab.capture;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.StandardOpenOption;

/**
 * The fast offline path: a plain-Java, memory-mapped reader of pcap (both byte orders, micro-
 * and nanosecond) and pcapng (SHB, IDB, EPB, SPB; other blocks skipped) files. It never trusts a
 * length in the file: a record that claims more than the file holds or more than
 * {@link #MAX_RECORD} bytes ends reading with {@link Result#truncated} set and the offset, instead
 * of throwing or allocating. Files of any size are read through a sliding mapping window.
 */
public final class PcapFileReader {
    /** Largest packet record accepted (bytes): bigger claims are corruption (libpcap's own cap is 256 KiB). */
    public static final int MAX_RECORD = 262144;
    private static final long WINDOW = 1L << 30;

    /** What reading found: packets delivered, records skipped, and whether/where the file ended badly. */
    public static final class Result {
        public long packets, skipped, bytes;
        public boolean truncated;
        public String problem;
        public String format;
        /** Sums over the pcapng Interface Statistics Blocks (-1: none had the option): packets received,
         * dropped by the interface/capture (isb_ifdrop), by the OS (isb_osdrop), delivered to the user. */
        public long isbIfRecv = -1, isbIfDrop = -1, isbOsDrop = -1, isbUsrDeliv = -1;
        public int isbBlocks;
    }

    private static long add(long acc, long v) { return (acc < 0 ? 0 : acc) + v; }

    private final Path path;
    private final FileChannel ch;
    private final long size;
    private MappedByteBuffer win;
    private ByteBuffer winO;
    private ByteOrder fileOrder = ByteOrder.BIG_ENDIAN;
    private long winStart = -1, winCap;

    private PcapFileReader(Path path) throws IOException {
        this.path = path;
        this.ch = FileChannel.open(path, StandardOpenOption.READ);
        this.size = ch.size();
    }

    /**
     * Read every packet of {@code path} into {@code sink}.
     *
     * @throws CaptureFormatException for an unreadable file, one that is not a regular file (a named
     *         pipe, a device: refused without being opened) or one that is neither pcap nor pcapng
     *         (wrong magic, zero length, bad header), naming the file
     */
    public static Result read(Path path, PacketSink sink) throws CaptureFormatException {
        try {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            if (!a.isRegularFile()) { // a named pipe or a device would block or never end: refused unopened
                throw new CaptureFormatException(path + ": " + (a.isDirectory() ? "a folder" : "a named pipe, device or socket")
                        + ", not a regular file: captures are read from regular files only");
            }
            PcapFileReader r = new PcapFileReader(path);
            try {
                return r.run(sink);
            } finally {
                r.ch.close();
            }
        } catch (IOException e) {
            throw new CaptureFormatException(path + ": cannot read: " + e.getMessage());
        }
    }

    /** A buffer over [pos, pos+len) of the file; null if past the end (header probing only). */
    private ByteBuffer at(long pos, int len) throws IOException {
        int r = rel(pos, len);
        if (r < 0) return null;
        ByteBuffer b = win.duplicate();
        b.position(r);
        return b;
    }

    /**
     * Index of file offset {@code pos} in the current mapping window ({@link #win} big-endian for
     * packet data, {@link #winO} in the file's byte order for headers), remapping so that
     * [pos, pos+len) is inside it; -1 when that range is not in the file. No allocation unless remapped.
     */
    private int rel(long pos, int len) throws IOException {
        if (pos < 0 || len < 0 || pos + len > size) return -1;
        if (winStart < 0 || pos < winStart || pos + len > winStart + winCap) {
            winStart = pos;
            win = ch.map(FileChannel.MapMode.READ_ONLY, pos, Math.min(WINDOW, size - pos));
            win.order(ByteOrder.BIG_ENDIAN);
            winCap = win.capacity();
            winO = win.duplicate().order(fileOrder);
        }
        return (int) (pos - winStart);
    }

    private Result run(PacketSink sink) throws IOException, CaptureFormatException {
        Result res = new Result();
        if (size < 24) {
            ByteBuffer b = at(0, (int) size);
            if (size >= 4 && b != null && (b.getInt(b.position()) == 0x0A0D0D0A)) {
                throw new CaptureFormatException(path + ": pcapng file too short (" + size + " bytes)");
            }
            throw new CaptureFormatException(path + ": not a pcap/pcapng file (" + size + " bytes, need a 24-byte header)");
        }
        ByteBuffer h = at(0, 24);
        int magicBE = h.order(ByteOrder.BIG_ENDIAN).getInt(0);
        switch (magicBE) {
            case 0xa1b2c3d4: return pcap(res, sink, ByteOrder.BIG_ENDIAN, 1000, "pcap");
            case 0xd4c3b2a1: return pcap(res, sink, ByteOrder.LITTLE_ENDIAN, 1000, "pcap");
            case 0xa1b23c4d: return pcap(res, sink, ByteOrder.BIG_ENDIAN, 1, "pcap-ns");
            case 0x4d3cb2a1: return pcap(res, sink, ByteOrder.LITTLE_ENDIAN, 1, "pcap-ns");
            case 0x0A0D0D0A: return pcapng(res, sink);
            default:
                throw new CaptureFormatException(String.format("%s: wrong magic 0x%08x at offset 0: not pcap or pcapng",
                        path, magicBE));
        }
    }

    private Result pcap(Result res, PacketSink sink, ByteOrder order, long tsMult, String fmt)
            throws IOException, CaptureFormatException {
        res.format = fmt;
        fileOrder = order;
        winStart = -1;
        int h0 = rel(0, 24);
        int link = winO.getInt(h0 + 20) & 0x0FFFFFFF;
        long pos = 24;
        while (pos < size) {
            int r = rel(pos, 16);
            if (r < 0) { res.truncated = true; res.problem = "record header cut at offset " + pos; break; }
            ByteBuffer o = winO;
            long sec = o.getInt(r) & 0xFFFFFFFFL, frac = o.getInt(r + 4) & 0xFFFFFFFFL;
            int cap = o.getInt(r + 8), orig = o.getInt(r + 12);
            if (cap < 0 || cap > MAX_RECORD) {
                res.truncated = true;
                res.problem = "record at offset " + pos + " claims " + (cap & 0xFFFFFFFFL) + " bytes (corrupt)";
                break;
            }
            int d = rel(pos + 16, cap);
            if (d < 0) { res.truncated = true; res.problem = "packet data cut at offset " + pos; break; }
            sink.packet(sec * 1_000_000_000L + frac * tsMult, link, win, d, cap, Math.max(orig, cap));
            res.packets++;
            res.bytes += cap;
            pos += 16 + cap;
        }
        return res;
    }

    private Result pcapng(Result res, PacketSink sink) throws IOException, CaptureFormatException { // long: one loop over the blocks keeps the packet path (EPB/SPB) inline for the reader's speed (README, "Speed")
        res.format = "pcapng";
        ByteOrder order = ByteOrder.LITTLE_ENDIAN;
        fileOrder = order;
        winStart = -1;
        int[] linkOf = new int[0];
        long[] tsUnitNs = new long[0];
        int nIf = 0;
        long pos = 0;
        while (pos < size) {
            int r = rel(pos, 12);
            if (r < 0) { res.truncated = true; res.problem = "block header cut at offset " + pos; break; }
            int type = win.getInt(r);
            if (type == 0x0A0D0D0A) {
                int bom = win.getInt(r + 8);
                if (bom == 0x1A2B3C4D) order = ByteOrder.BIG_ENDIAN;
                else if (bom == 0x4D3C2B1A) order = ByteOrder.LITTLE_ENDIAN;
                else throw new CaptureFormatException(path + ": pcapng section at offset " + pos + " has a bad byte-order magic");
                nIf = 0;
                fileOrder = order;
                winO = win.duplicate().order(order);
            }
            type = winO.getInt(r);
            long len = winO.getInt(r + 4) & 0xFFFFFFFFL;
            if (len < minBlock(type) || len % 4 != 0 || len > MAX_RECORD + 64L || pos + len > size) {
                res.truncated = true;
                res.problem = "block at offset " + pos + " (type 0x" + Integer.toHexString(type) + ") has a bad length "
                        + len + (len < minBlock(type) ? " (its type needs at least " + minBlock(type) + ")" : "");
                break;
            }
            int s = rel(pos, (int) len);
            ByteBuffer blk = winO;
            if (type == 0x00000001) { // IDB
                if (nIf == linkOf.length) {
                    linkOf = java.util.Arrays.copyOf(linkOf, nIf * 2 + 4);
                    tsUnitNs = java.util.Arrays.copyOf(tsUnitNs, nIf * 2 + 4);
                }
                linkOf[nIf] = blk.getShort(s + 8) & 0xFFFF;
                tsUnitNs[nIf] = tsUnitNs(blk, s, len);
                nIf++;
            } else if (type == 0x00000005) { // ISB: the capturing program's own counters (dumpcap writes one per interface)
                isb(res, blk, s, len);
            } else if (type == 0x00000006 || type == 0x00000003) { // EPB, SPB
                int ifId = type == 6 ? blk.getInt(s + 8) : 0;
                int cap, orig, dataOff;
                long ts = 0;
                if (type == 6) {
                    long t = ((blk.getInt(s + 12) & 0xFFFFFFFFL) << 32) | (blk.getInt(s + 16) & 0xFFFFFFFFL);
                    cap = blk.getInt(s + 20);
                    orig = blk.getInt(s + 24);
                    dataOff = 28;
                    if (ifId >= 0 && ifId < nIf) ts = t * tsUnitNs[ifId];
                } else {
                    orig = blk.getInt(s + 8);
                    cap = (int) Math.min(orig, len - 16);
                    dataOff = 12;
                }
                if (ifId < 0 || ifId >= nIf || cap < 0 || dataOff + cap > len - 4) {
                    res.skipped++;
                } else {
                    sink.packet(ts, linkOf[ifId], win, s + dataOff, cap, Math.max(orig, cap));
                    res.packets++;
                    res.bytes += cap;
                }
            }
            pos += len;
        }
        return res;
    }

    /**
     * The least length (bytes) of a pcapng block of {@code type}: its fixed fields with the 12 bytes of
     * type, length and trailing length (pcapng, draft-ietf-opsawg-pcapng, section 4: SHB 28, IDB 20,
     * SPB 16, ISB 24, EPB 32); 12 for other types (skipped unread). A shorter block is cut, never read past.
     */
    static int minBlock(int type) {
        switch (type) {
            case 0x0A0D0D0A: return 28;
            case 0x00000001: return 20;
            case 0x00000003: return 16;
            case 0x00000005: return 24;
            case 0x00000006: return 32;
            default: return 12;
        }
    }

    /** An IDB's timestamp unit in ns from its if_tsresol option (9): 10^-v s; default 10^-6 s (1000 ns). */
    private static long tsUnitNs(ByteBuffer blk, int s, long len) {
        long unit = 1000;
        int o = s + 16;
        while (o + 4 <= s + len - 4) { // options
            int code = blk.getShort(o) & 0xFFFF, olen = blk.getShort(o + 2) & 0xFFFF;
            if (code == 0) break;
            if (code == 9 && olen >= 1) {
                int v = blk.get(o + 4) & 0xFF;
                if ((v & 0x80) == 0 && v <= 9) unit = (long) Math.pow(10, 9 - v);
            }
            o += 4 + ((olen + 3) & ~3);
        }
        return unit;
    }

    /** An ISB: the capturing program's own counters (dumpcap writes one per interface), summed into {@code res}. */
    private static void isb(Result res, ByteBuffer blk, int s, long len) {
        int o = s + 20;
        while (o + 4 <= s + len - 4) {
            int code = blk.getShort(o) & 0xFFFF, olen = blk.getShort(o + 2) & 0xFFFF;
            if (code == 0) break;
            if (olen == 8 && o + 12 <= s + len - 4) {
                long v = blk.getLong(o + 4);
                if (code == 4) res.isbIfRecv = add(res.isbIfRecv, v);
                else if (code == 5) res.isbIfDrop = add(res.isbIfDrop, v);
                else if (code == 7) res.isbOsDrop = add(res.isbOsDrop, v);
                else if (code == 8) res.isbUsrDeliv = add(res.isbUsrDeliv, v);
            }
            o += 4 + ((olen + 3) & ~3);
        }
        res.isbBlocks++;
    }
}
