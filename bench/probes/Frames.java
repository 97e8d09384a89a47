import org.qoslab.workload.render.Renderer;
import org.qoslab.workload.render.Scene;

/**
 * One JVM renders the JGF RayTracer's scene (150 x 150, 1 ray per pixel: make run's size A) FRAMES
 * times and prints each frame's seconds: how the compute of make run's uncongested trial moves
 * on this machine within one JVM (bench/README.md, "Why the quiet reference moves").
 *
 * <pre>
 * javac -cp java-workload/target/qoslab-workload-0.1.0.jar -d /tmp bench/probes/Frames.java
 * taskset -c 1 java -XX:+UseSerialGC -Xmx384m -cp java-workload/target/qoslab-workload-0.1.0.jar:/tmp Frames 14
 * </pre>
 */
public final class Frames {
    private Frames() { }

    public static void main(String[] args) {
        int frames = Integer.parseInt(args[0]);
        Renderer r = Renderer.withRays(Scene.jgf(), 150, 1);
        int[] image = new int[150 * 150];
        StringBuilder out = new StringBuilder();
        for (int f = 0; f < frames; f++) {
            long t0 = System.nanoTime();
            for (int y = 0; y < 150; y++) {
                r.renderRow(y, image, y * 150);
            }
            out.append(String.format("%.3f ", (System.nanoTime() - t0) / 1e9));
        }
        System.out.println(out.toString().trim());
    }
}
