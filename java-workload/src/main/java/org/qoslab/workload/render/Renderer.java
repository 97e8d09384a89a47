package org.qoslab.workload.render;

import java.util.List;

/**
 * Renders rows of a square image of the JGF section-3 scene with the JGF shading model
 * (diffuse + Phong-like specular per light with hard shadows, reflection, transmission,
 * recursion depth limit 6, colour channels clamped to 255).
 *
 * <p>The JGF reference checksums (2676692 for 150x150, 29827635 for 500x500; JGF section 3
 * {@code JGFRayTracerBench.JGFvalidate} refval) were produced by code that reuses three
 * temporaries across the recursion: the nearest-hit record, the secondary ray and the light
 * vector. Their reuse changes results (the transmission ray starts from the point the reflection
 * recursion last wrote; the inside/outside test reads the hit record the shadow and reflection
 * rays last wrote; a shadow ray is blocked by any sphere along its line, even beyond the light).
 * This class keeps those semantics on purpose: the checksum is the benchmark's validation.
 *
 * <p>Supersampling (qoslab's compute knob, issue 32): with {@code supersample} k > 1 every pixel
 * is the mean of a k x k grid of rays through the centres of its k x k sub-pixels, clamped after
 * averaging, so compute grows k^2-fold while the image (and every byte on the wire) keeps its size.
 * k = 1 is the JGF benchmark itself, bit for bit (sub-pixel offset 0). The JGF reference checksum
 * holds only for k = 1; for k > 1 qoslab's own references ({@code Manager.referenceChecksum}) were
 * computed with this class in one JVM (the {@code sequential} command) and are regression values,
 * not JGF's. {@link #withRays} traces any number of rays per pixel on a cols x rows grid
 * ({@link Rays}, issue 48): a knob finer than k x k, with its own size-A references.
 *
 * <p>Not thread-safe: one Renderer per thread. Each pixel depends only on its own coordinates,
 * so any distribution of rows over renderers gives the same image.
 */
public final class Renderer {
    /** JGF recursion limit: trace() returns black above this level. */
    public static final int MAX_LEVEL = 6;

    private final Scene.Sphere[] spheres;
    private final Scene.Light[] lights;
    private final Vec eye;
    private final Vec viewDir, upStep, leftStep;
    private final int width;
    private final int cols, rows;

    // Shared temporaries, reused exactly as in the JGF code (see class comment).
    private final Hit hit = new Hit();
    private final Vec lightDir = new Vec();
    private final Vec scratch = new Vec();
    private Vec secOrigin = new Vec();
    private Vec secDir = new Vec();

    private static final Vec BLACK = new Vec();

    /** Nearest intersection found by {@link #intersect}. */
    private static final class Hit {
        double t;
        Scene.Sphere sphere;
        boolean enter;
    }

    /**
     * @param scene the scene
     * @param width image width = height in pixels (the JGF image is square)
     */
    public Renderer(Scene scene, int width) {
        this(scene, width, 1);
    }

    /**
     * @param scene the scene
     * @param width image width = height in pixels (the JGF image is square)
     * @param supersample k: rays per pixel on a k x k grid (1 = the JGF benchmark; at most 16)
     */
    public Renderer(Scene scene, int width, int supersample) {
        this(scene, width, checkSupersample(supersample), supersample);
    }

    /**
     * A renderer tracing {@code rays} rays per pixel on the grid of {@link Rays#grid} (issue 48):
     * {@code rays = k * k} is {@code new Renderer(scene, width, k)}, bit for bit.
     *
     * @throws IllegalArgumentException for a width below 1 or rays outside 1..{@link Rays#MAX}
     */
    public static Renderer withRays(Scene scene, int width, int rays) {
        int[] g = Rays.grid(rays);
        return new Renderer(scene, width, g[0], g[1]);
    }

    private static int checkSupersample(int k) {
        if (k < 1 || k > 16) throw new IllegalArgumentException("supersample must be 1-16: " + k);
        return k;
    }

    private Renderer(Scene scene, int width, int cols, int rows) {
        if (width <= 0) throw new IllegalArgumentException("width must be positive: " + width);
        this.cols = cols;
        this.rows = rows;
        this.spheres = scene.spheres.toArray(new Scene.Sphere[0]);
        this.lights = scene.lights.toArray(new Scene.Light[0]);
        this.width = width;
        Scene.View v = scene.view;
        eye = new Vec(v.from);
        viewDir = Vec.difference(v.at, v.from);
        viewDir.normalize();
        Vec along = new Vec(viewDir);
        along.scale(Vec.dot(v.up, viewDir));
        upStep = Vec.difference(v.up, along);
        upStep.normalize();
        leftStep = Vec.cross(v.up, viewDir);
        leftStep.normalize();
        double frustum = v.dist * Math.tan(v.angle);
        upStep.scale(-frustum);
        leftStep.scale(v.aspect * frustum);
    }

    public int width() { return width; }

    /** Rays traced per pixel (cols x rows of its sub-pixel grid; 1 = JGF). */
    public int rays() { return cols * rows; }

    /**
     * Render row {@code y} into {@code out[offset .. offset+width)} as 0xAARRGGBB pixels.
     *
     * @return the row's contribution to the JGF checksum: sum of clamped R+G+B over the row
     */
    public long renderRow(int y, int[] out, int offset) {
        if (y < 0 || y >= width) throw new IllegalArgumentException("row " + y + " outside 0.." + (width - 1));
        long sum = 0;
        for (int x = 0; x < width; x++) {
            double cr = 0, cg = 0, cb = 0;
            for (int sy = 0; sy < rows; sy++) {
                // sub-pixel centre offset in pixels: 0 for one ray (the JGF ray, bit for bit)
                double ylen = 2.0 * (y + (sy + 0.5) / rows - 0.5) / width - 1.0;
                for (int sx = 0; sx < cols; sx++) {
                    double xlen = 2.0 * (x + (sx + 0.5) / cols - 0.5) / width - 1.0;
                    Vec dir = Vec.combine(xlen, leftStep, ylen, upStep);
                    dir.add(viewDir);
                    dir.normalize();
                    Vec col = trace(0, 1.0, eye, dir);
                    cr += col.x; cg += col.y; cb += col.z;
                }
            }
            double n = cols * rows;
            int r = Math.min(255, (int) (cr / n * 255.0));
            int g = Math.min(255, (int) (cg / n * 255.0));
            int b = Math.min(255, (int) (cb / n * 255.0));
            sum += r + g + b;
            out[offset + x] = 0xFF000000 | (r << 16) | (g << 8) | b;
        }
        return sum;
    }

    /** Checksum of pixels as produced by {@link #renderRow}: sum over pixels of R+G+B. */
    public static long checksum(int[] pixels, int from, int to) {
        long sum = 0;
        for (int i = from; i < to; i++) {
            int p = pixels[i];
            sum += ((p >> 16) & 0xFF) + ((p >> 8) & 0xFF) + (p & 0xFF);
        }
        return sum;
    }

    private boolean intersect(Vec origin, Vec dir) {
        hit.t = 1e9;
        boolean any = false;
        for (Scene.Sphere s : spheres) {
            scratch.setDifference(s.center, origin);
            double b = Vec.dot(scratch, dir);
            double vv = Vec.dot(scratch, scratch);
            double disc = b * b - vv + s.radius2;
            if (disc < 0.0) continue;
            disc = Math.sqrt(disc);
            double t = (b - disc < 1e-6) ? b + disc : b - disc;
            if (t < 1e-6) continue;
            if (t < hit.t) {
                hit.t = t;
                hit.sphere = s;
                hit.enter = vv > s.radius2 + 1e-6;
                any = true;
            }
        }
        return any;
    }

    private Vec trace(int level, double weight, Vec origin, Vec dir) {
        if (level > MAX_LEVEL) return new Vec();
        if (!intersect(origin, dir)) return BLACK;
        Vec p = new Vec(origin.x + dir.x * hit.t, origin.y + dir.y * hit.t, origin.z + dir.z * hit.t);
        Vec n = Vec.difference(p, hit.sphere.center);
        n.normalize();
        if (Vec.dot(dir, n) >= 0.0) n.negate();
        return shade(level, weight, p, n, dir);
    }

    private static Vec specularDirection(Vec in, Vec n) {
        Vec r = Vec.combine(1.0 / Math.abs(Vec.dot(in, n)), in, 2.0, n);
        r.normalize();
        return r;
    }

    private static Vec transmissionDirection(double n1, double n2, Vec in, Vec n) {
        double eta = n1 / n2;
        double c1 = -Vec.dot(in, n);
        double cs2 = 1.0 - eta * eta * (1.0 - c1 * c1);
        if (cs2 < 0.0) return null; // total internal reflection (never with the JGF scene: ior 1)
        Vec r = Vec.combine(eta, in, eta * c1 - Math.sqrt(cs2), n);
        r.normalize();
        return r;
    }

    private Vec shade(int level, double weight, Vec p, Vec n, Vec in) {
        Scene.Surface surf = hit.sphere.surface;
        Vec col = new Vec();
        Vec refl = surf.shine > 1e-6 ? specularDirection(in, n) : new Vec();
        for (Scene.Light light : lights) {
            lightDir.setDifference(light.pos, p);
            if (Vec.dot(n, lightDir) < 0.0) continue;
            lightDir.normalize();
            secOrigin = p;
            secDir = lightDir;
            if (intersect(secOrigin, secDir)) continue; // in shadow (any hit on the line counts)
            col.addScaled(Vec.dot(n, lightDir) * surf.kd * light.brightness, surf.color);
            if (surf.shine > 1e-6) {
                double spec = Vec.dot(refl, lightDir);
                if (spec > 1e-6) {
                    spec = Math.pow(spec, surf.shine);
                    col.x += spec; col.y += spec; col.z += spec;
                }
            }
        }
        secOrigin = p;
        if (surf.ks * weight > 1e-3) {
            secDir = specularDirection(in, n);
            col.addScaled(surf.ks, trace(level + 1, surf.ks * weight, secOrigin, secDir));
        }
        if (surf.kt * weight > 1e-3) {
            // hit.enter and secOrigin are read after the recursion above rewrote them (JGF semantics)
            secDir = hit.enter ? transmissionDirection(1.0, surf.ior, in, n)
                               : transmissionDirection(surf.ior, 1.0, in, n);
            col.addScaled(surf.kt, trace(level + 1, surf.kt * weight, secOrigin, secDir));
        }
        return col;
    }
}
