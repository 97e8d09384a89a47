package org.qoslab.workload.render;

import java.io.Serializable;
import java.util.List;

/**
 * The scene a manager sends to every worker once per run: spheres, point lights and the view.
 * {@link #jgf()} builds the Java Grande Forum section-3 benchmark scene.
 */
public final class Scene implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Surface of a sphere: colour and the shading coefficients of the JGF model. */
    public static final class Surface implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Vec color;
        public final double kd, ks, kt, shine, ior;

        public Surface(Vec color, double kd, double ks, double kt, double shine, double ior) {
            this.color = color; this.kd = kd; this.ks = ks; this.kt = kt; this.shine = shine; this.ior = ior;
        }
    }

    /** A sphere: centre, radius, surface. */
    public static final class Sphere implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Vec center;
        public final double radius, radius2;
        public final Surface surface;

        public Sphere(Vec center, double radius, Surface surface) {
            this.center = center; this.radius = radius; this.radius2 = radius * radius; this.surface = surface;
        }
    }

    /** A point light: position and brightness. */
    public static final class Light implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Vec pos;
        public final double brightness;

        public Light(Vec pos, double brightness) { this.pos = pos; this.brightness = brightness; }
    }

    /** The camera: eye, look-at point, up vector, screen distance, half field of view (radians), aspect. */
    public static final class View implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Vec from, at, up;
        public final double dist, angle, aspect;

        public View(Vec from, Vec at, Vec up, double dist, double angle, double aspect) {
            this.from = from; this.at = at; this.up = up; this.dist = dist; this.angle = angle; this.aspect = aspect;
        }
    }

    public final List<Sphere> spheres;
    public final List<Light> lights;
    public final View view;

    public Scene(List<Sphere> spheres, List<Light> lights, View view) {
        this.spheres = List.copyOf(spheres); this.lights = List.copyOf(lights); this.view = view;
    }

    /**
     * The JGF section-3 scene: 64 spheres of radius 3 on a 4x4x4 grid spanning [-10, 10] on each
     * axis, coloured (0, 0, (i+j)/6), with kd 1, ks 0.5, kt 0.5, shine 15, ior 1; five lights of
     * brightness 1; the eye at (0, 20, -30) looking at the origin, up (0, 1, 0), a 35 degree angle
     * (with pi as 3.14159265, as the benchmark writes it). Source: JGF section 3 RayTracer.createScene.
     */
    public static Scene jgf() {
        int n = 4;
        java.util.ArrayList<Sphere> spheres = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                for (int k = 0; k < n; k++) {
                    Vec c = new Vec(20.0 / (n - 1) * i - 10.0, 20.0 / (n - 1) * j - 10.0, 20.0 / (n - 1) * k - 10.0);
                    Surface s = new Surface(new Vec(0, 0, (i + j) / (double) (n + n - 2)), 1.0, 0.5, 0.5, 15.0, 1.0);
                    spheres.add(new Sphere(c, 3, s));
                }
        List<Light> lights = List.of(
                new Light(new Vec(100, 100, -50), 1.0), new Light(new Vec(-100, 100, -50), 1.0),
                new Light(new Vec(100, -100, -50), 1.0), new Light(new Vec(-100, -100, -50), 1.0),
                new Light(new Vec(200, 200, 0), 1.0));
        View view = new View(new Vec(0, 20, -30), new Vec(0, 0, 0), new Vec(0, 1, 0), 1.0,
                35.0 * 3.14159265 / 180.0, 1.0);
        return new Scene(spheres, lights, view);
    }
}
