package org.qoslab.workload.render;

import java.io.Serializable;

/**
 * Mutable 3-vector of doubles. The in-place operations exist because the JGF section-3 RayTracer
 * reuses temporaries, and its reference checksum depends on exactly that reuse (see {@link Renderer}).
 */
public final class Vec implements Serializable {
    private static final long serialVersionUID = 1L;
    public double x, y, z;

    public Vec() { }

    public Vec(double x, double y, double z) { this.x = x; this.y = y; this.z = z; }

    public Vec(Vec o) { this(o.x, o.y, o.z); }

    /** this += o */
    public void add(Vec o) { x += o.x; y += o.y; z += o.z; }

    /** this += s * o */
    public void addScaled(double s, Vec o) { x += s * o.x; y += s * o.y; z += s * o.z; }

    /** this = a - b */
    public void setDifference(Vec a, Vec b) { x = a.x - b.x; y = a.y - b.y; z = a.z - b.z; }

    public void scale(double s) { x *= s; y *= s; z *= s; }

    public void negate() { x = -x; y = -y; z = -z; }

    /** Normalise in place (a zero vector stays zero); returns the length before. */
    public double normalize() {
        double len = Math.sqrt(x * x + y * y + z * z);
        if (len > 0.0) { x /= len; y /= len; z /= len; }
        return len;
    }

    public static Vec difference(Vec a, Vec b) { return new Vec(a.x - b.x, a.y - b.y, a.z - b.z); }

    public static double dot(Vec a, Vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

    public static Vec cross(Vec a, Vec b) {
        return new Vec(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
    }

    /** a*A + b*B as a new vector. */
    public static Vec combine(double a, Vec va, double b, Vec vb) {
        return new Vec(a * va.x + b * vb.x, a * va.y + b * vb.y, a * va.z + b * vb.z);
    }

    @Override public String toString() { return "<" + x + "," + y + "," + z + ">"; }
}
