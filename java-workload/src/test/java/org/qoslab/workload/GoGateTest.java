package org.qoslab.workload;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The manager's --go-file: waits for the file, reports the wait, ends on 'abort' or a timeout. */
class GoGateTest {
    @TempDir Path dir;

    @Test
    void waitsUntilTheFileAppearsAndReportsTheWait() throws Exception {
        Path go = dir.resolve("go");
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(150);
                Files.writeString(go, "go\n");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        t.start();
        double waited = GoGate.await(go, 10);
        t.join();
        assertTrue(waited >= 0.14 && waited < 5, "waited " + waited + " s");
    }

    @Test
    void waitingMarksTheBootDoneWithAReadyFile() throws Exception {
        Path go = dir.resolve("go"), ready = dir.resolve("go.ready");
        Thread t = new Thread(() -> {
            try {
                while (!Files.exists(ready)) Thread.sleep(5);
                Files.writeString(go, "go\n");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        t.start();
        assertTrue(GoGate.await(go, 10) < 5);  // the go came only after the ready file appeared
        t.join();
        assertTrue(Files.exists(ready));
    }

    @Test
    void aFileThatIsThereAlreadyMeansNoWait() throws Exception {
        Path go = Files.writeString(dir.resolve("go"), "go\n");
        assertTrue(GoGate.await(go, 10) < 0.05);
    }

    @Test
    void abortEndsWithoutARun() throws Exception {
        Path go = Files.writeString(dir.resolve("go"), "abort\n");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> GoGate.await(go, 10));
        assertTrue(e.getMessage().contains("aborted by the harness"), e.getMessage());
    }

    @Test
    void aFileThatNeverComesTimesOut() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GoGate.await(dir.resolve("never"), 0.2));
        assertTrue(e.getMessage().contains("did not appear within 0.2 s"), e.getMessage());
    }
}
