package org.qoslab.workload.rmi;

import java.rmi.RemoteException;
import org.qoslab.workload.render.Renderer;
import org.qoslab.workload.render.Scene;

/** Worker-side render service: one renderer, calls served one at a time (one computing unit). */
public final class RenderServiceImpl implements RenderService {
    private final String description;
    private Renderer renderer;

    public RenderServiceImpl(String description) { this.description = description; }

    @Override
    public synchronized void prepare(Scene scene, int width, int rays) throws RemoteException {
        try {
            renderer = Renderer.withRays(scene, width, rays);
        } catch (IllegalArgumentException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public synchronized RowBlock render(int[] rows, String codec) throws RemoteException {
        if (renderer == null) throw new RemoteException("render called before prepare");
        long t0 = System.nanoTime();
        int w = renderer.width();
        int[] pixels = new int[rows.length * w];
        long sum = 0;
        try {
            for (int i = 0; i < rows.length; i++) sum += renderer.renderRow(rows[i], pixels, i * w);
            return RowBlock.of(codec, rows, pixels, sum, System.nanoTime() - t0);
        } catch (IllegalArgumentException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public String describe() { return description; }
}
