package dev.nepenthe.cluster.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The byte scan a replica's forget verification runs over folders Ratis keeps changing. */
final class ByteScanTest {

    @TempDir Path dir;

    @Test
    void aScanFindsTheBytesWhileSegmentsRollAndVanishBesideThem() throws Exception {
        byte[] needle = "forgotten-vector-bytes".getBytes(StandardCharsets.US_ASCII);
        Path kept = dir.resolve("current").resolve("log_0-99");
        Files.createDirectories(kept.getParent());
        Files.write(kept, concat("head-", needle, "-tail"));
        Path churn = dir.resolve("current");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> churnFailed = new AtomicReference<>();
        // As Ratis does: an open segment is written, renamed when it rolls, and removed when
        // the log is purged; folders come and go too.
        Thread roller =
                Thread.ofPlatform()
                        .start(
                                () -> {
                                    try {
                                        for (long n = 0; !stop.get(); n++) {
                                            Path open = churn.resolve("log_inprogress_" + n);
                                            Files.write(open, new byte[64]);
                                            Path closed = churn.resolve("log_" + n + "-" + n);
                                            Files.move(
                                                    open, closed, StandardCopyOption.ATOMIC_MOVE);
                                            Files.delete(closed);
                                            Path sub = dir.resolve("sm-" + n);
                                            Files.createDirectories(sub);
                                            Files.write(sub.resolve("x"), new byte[8]);
                                            Files.delete(sub.resolve("x"));
                                            Files.delete(sub);
                                        }
                                    } catch (IOException | RuntimeException e) {
                                        churnFailed.set(e);
                                    }
                                });
        try {
            for (int i = 0; i < 3_000; i++) {
                List<Path> hits = ByteScan.holding(dir, List.of(needle));
                assertEquals(List.of(kept), hits, "scan " + i);
            }
        } finally {
            stop.set(true);
            roller.join();
        }
        assertEquals(null, churnFailed.get());
        assertTrue(Files.exists(kept));
    }

    private static byte[] concat(String head, byte[] middle, String tail) {
        List<byte[]> parts = new ArrayList<>();
        parts.add(head.getBytes(StandardCharsets.US_ASCII));
        parts.add(middle);
        parts.add(tail.getBytes(StandardCharsets.US_ASCII));
        int n = parts.stream().mapToInt(p -> p.length).sum();
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
