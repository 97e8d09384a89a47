package org.qoslab.workload;

import java.util.concurrent.Callable;
import org.qoslab.workload.mpj.PortServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The mpj workload's rendezvous ({@code mpj-ports}): the ranks themselves run
 * {@code org.qoslab.workload.mpj.MpjBench} with MPJ Express's own arguments, outside picocli.
 */
final class MpjCommands {
    private MpjCommands() { }

    @Command(name = "mpj-ports", mixinStandardHelpOptions = true,
            description = "Collect the ports of N MPJ Express niodev ranks and hand them the table (what mpjrun does), then exit.")
    static final class PortsCmd implements Callable<Integer> {
        @Option(names = "--bind", required = true, description = "Address to listen on (the head node's).")
        String bind;
        @Option(names = "--port", defaultValue = "1400", description = "Port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--np", required = true, description = "Number of ranks.")
        int np;
        @Option(names = "--timeout", defaultValue = "60", description = "Seconds all ranks may take to register (default ${DEFAULT-VALUE}).")
        double timeout;

        @Override
        public Integer call() {
            try {
                System.err.println("[qoslab-workload] mpj-ports listening on " + bind + ":" + port + " for " + np + " ranks");
                PortServer.serve(bind, port, np, timeout);
                System.err.println("[qoslab-workload] mpj-ports: table sent to " + np + " ranks");
                return 0;
            } catch (Exception e) {
                System.err.println("[qoslab-workload] error: mpj-ports: " + WorkloadException.rootMessage(e));
                return 1;
            }
        }
    }
}
