package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link TimeSeries}: bins, the capture's own range, outliers, dense and sparse rows. */
class TimeSeriesTest {
    static final long S = 1_000_000_000L, T0 = 1_700_000_000L * S;
    static final int UDP = TrafficClass.UDP.ordinal();

    @Test
    void theClusterWithMostPacketsIsTheRangeAndTheRestAreOutliers() {
        TimeSeries ts = new TimeSeries(1.0, 3600);
        for (int i = 0; i < 10; i++) ts.add(T0 + i * S / 2, UDP, 1000); // 5 s of capture
        ts.add(T0 + 86_400 * S, UDP, 1000); // a timestamp a day away
        TimeSeries.Range r = ts.range(11);
        assertEquals(10, r.inRange);
        assertEquals(1, r.outliers);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), java.util.Arrays.stream(r.keys).boxed().toList());
        assertEquals(T0, r.firstTs);
        assertEquals(T0 + 9 * S / 2, r.lastTs);
        assertTrue(r.dense);
        assertEquals(5, r.rows);
        assertEquals(List.of(T0 / 1e9 + 86_400), r.outlierExamples);
    }

    @Test
    void bitsPerSecondAndTheRunningAverageAreWrittenPerBin() {
        TimeSeries ts = new TimeSeries(1.0, 3600);
        ts.add(T0, UDP, 1000);
        ts.add(T0 + 2 * S, UDP, 3000); // bin 1 empty
        StringWriter out = new StringWriter();
        ts.write(new PrintWriter(out, true), 2, 2);
        String[] lines = out.toString().split("\n");
        assertEquals(4, lines.length, out.toString());
        int nc = TrafficClass.values().length;
        String[] row0 = lines[1].split(","), row1 = lines[2].split(","), row2 = lines[3].split(",");
        assertEquals("0.000", row0[0]);
        assertEquals("8000.0", row0[1 + UDP]);
        assertEquals("0.0", row1[1 + UDP]);
        assertEquals("4000.0", row1[1 + nc + UDP], "average of bins 0 and 1");
        assertEquals("24000.0", row2[1 + UDP]);
        assertEquals("12000.0", row2[1 + nc + UDP], "average of bins 1 and 2 (window 2)");
    }

    @Test
    void sparseRowsKeepAZeroRowEitherSideOfEachGap() {
        assertEquals(List.of(0L, 1L, 9L, 10L, 11L, 12L), TimeSeries.sparseRows(new long[] {0, 10, 11, 12}));
        assertEquals(List.of(0L, 1L, 2L), TimeSeries.sparseRows(new long[] {0, 2}));
        assertEquals("-1.5", TimeSeries.fixed(-1.5, 1));
        assertEquals("0.125", TimeSeries.fixed(0.125, 3));
    }
}
