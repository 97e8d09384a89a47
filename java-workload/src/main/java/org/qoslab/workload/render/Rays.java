package org.qoslab.workload.render;

/**
 * Rays per pixel as a grid of sub-pixels (issue 48: a compute knob finer than supersampling's
 * k x k). {@code n} rays are traced through the centres of a {@code cols} x {@code rows} grid of
 * the pixel's sub-pixels, {@code rows} the largest divisor of {@code n} not above its square root:
 * 2 rays = 2 x 1, 3 = 3 x 1, 6 = 3 x 2, 8 = 4 x 2; a square {@code n = k * k} is the k x k grid of
 * {@code --supersample k}, bit for bit. Compute grows n-fold; the image and every byte on the wire
 * keep their size.
 */
public final class Rays {
    /** Most rays per pixel (the 16 x 16 grid of supersample 16). */
    public static final int MAX = 256;

    private Rays() { }

    /** {cols, rows} of {@code rays} rays per pixel; IllegalArgumentException outside 1..{@link #MAX}. */
    public static int[] grid(int rays) {
        if (rays < 1 || rays > MAX) throw new IllegalArgumentException("rays per pixel must be 1-" + MAX + ": " + rays);
        int rows = 1;
        for (int d = 1; d * d <= rays; d++) if (rays % d == 0) rows = d;
        return new int[] {rays / rows, rows};
    }

    /**
     * qoslab's size-A (150 x 150) checksums for 2..16 rays per pixel, index rays - 2, computed
     * with this code in one JVM ({@code java -jar qoslab-workload.jar sequential --size A --rays N};
     * java-workload/README.md, "Supersampling"): regression values, not JGF's. 4, 9 and 16 rays are
     * supersample 2, 3 and 4 (issue 32's values).
     */
    static final long[] REFVAL_A = {
        2700805L, 2707159L, 2720036L, 2708659L, 2720374L, 2707958L, 2719237L, 2719939L,
        2722006L, 2711265L, 2721156L, 2709887L, 2721562L, 2722575L, 2722019L};

    /** qoslab's reference checksum of a size-A render with 2..16 rays per pixel; null otherwise (1 ray: JGF's). */
    public static Long referenceA(int rays) {
        return rays >= 2 && rays <= REFVAL_A.length + 1 ? Long.valueOf(REFVAL_A[rays - 2]) : null;
    }
}
