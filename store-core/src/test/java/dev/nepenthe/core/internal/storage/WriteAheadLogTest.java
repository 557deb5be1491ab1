package dev.nepenthe.core.internal.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteAheadLogTest {

    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private List<String> replayAll(WriteAheadLog.RecoveryReport[] report) throws IOException {
        List<String> out = new ArrayList<>();
        WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC,
                (gen, p) -> out.add(new String(p, StandardCharsets.UTF_8)), report);
        wal.close();
        return out;
    }

    @Test
    void entriesSurviveReopenInOrderAcrossGenerations() throws IOException {
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(b("one")));
            wal.sync(wal.append(List.of(b("two"), b("three"))));
            wal.rotate();
            wal.sync(wal.append(b("four")));
        }
        WriteAheadLog.RecoveryReport[] r = new WriteAheadLog.RecoveryReport[1];
        assertEquals(List.of("one", "two", "three", "four"), replayAll(r));
        assertEquals(4, r[0].entries());
        assertEquals(0, r[0].tornBytesDropped());
    }

    @Test
    void deleteBeforeRemovesOldGenerationsWhole() throws IOException {
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(b("old-secret")));
            long gen = wal.rotate();
            wal.sync(wal.append(b("new")));
            wal.deleteBefore(gen);
            assertEquals(List.of(gen), wal.generations());
        }
        assertEquals(List.of("new"), replayAll(null));
        for (Path f : Files.list(dir).toList()) {
            assertEquals(-1, indexOf(Files.readAllBytes(f), b("old-secret")));
        }
    }

    @Test
    void tornTailOfTheNewestGenerationIsDroppedAndReported() throws IOException {
        Path newest;
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(b("kept-1")));
            wal.sync(wal.append(b("kept-2")));
            wal.sync(wal.append(b("torn-entry-payload")));
            newest = dir.resolve(String.format("wal-%016d.log", wal.generation()));
        }
        byte[] bytes = Files.readAllBytes(newest);
        for (int cut : new int[] {5, 11}) { // inside the payload; inside the length/crc prefix
            Files.write(newest, Arrays.copyOf(bytes, bytes.length - "torn-entry-payload".length() - 8 + cut));
            WriteAheadLog.RecoveryReport[] r = new WriteAheadLog.RecoveryReport[1];
            assertEquals(List.of("kept-1", "kept-2"), replayAll(r));
            assertEquals(cut, r[0].tornBytesDropped());
            assertEquals(newest, r[0].tornFile());
            // Reopening again finds a clean log: the tail was cut off the file.
            WriteAheadLog.RecoveryReport[] again = new WriteAheadLog.RecoveryReport[1];
            assertEquals(List.of("kept-1", "kept-2"), replayAll(again));
            assertEquals(0, again[0].tornBytesDropped());
            assertNull(again[0].tornFile());
            for (Path f : Files.list(dir).toList()) {
                if (!f.equals(newest)) {
                    Files.delete(f);
                }
            }
        }
    }

    @Test
    void aBadEntryWithDataAfterItIsCorruptionNamingTheFile() throws IOException {
        Path f;
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(b("first-entry")));
            wal.sync(wal.append(b("second-entry")));
            f = dir.resolve(String.format("wal-%016d.log", wal.generation()));
        }
        byte[] bytes = Files.readAllBytes(f);
        int at = indexOf(bytes, b("first-entry"));
        bytes[at + 2] ^= 0x20;
        Files.write(f, bytes);
        CorruptFileException e = assertThrows(CorruptFileException.class, () -> replayAll(null));
        assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("does not verify"), e.getMessage());
    }

    @Test
    void concurrentWritersShareFsyncsAndLoseNothing() throws Exception {
        int threads = 4;
        int perThread = 200;
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int tt = t;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        wal.sync(wal.append(b(tt + ":" + i)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            pool.shutdown();
        }
        List<String> got = replayAll(null);
        assertEquals(threads * perThread, got.size());
        Set<String> unique = new HashSet<>(got);
        assertEquals(threads * perThread, unique.size());
        // Each writer's entries appear in its own order.
        for (int t = 0; t < threads; t++) {
            int last = -1;
            for (String s : got) {
                if (s.startsWith(t + ":")) {
                    int i = Integer.parseInt(s.substring(s.indexOf(':') + 1));
                    assertEquals(last + 1, i);
                    last = i;
                }
            }
        }
    }

    @Test
    void replayedPayloadsAreByteExact() throws IOException {
        byte[] payload = new byte[70_000];
        new java.util.Random(5).nextBytes(payload);
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.ASYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(payload));
        }
        List<byte[]> got = new ArrayList<>();
        WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> got.add(p), null).close();
        assertEquals(1, got.size());
        assertArrayEquals(payload, got.get(0));
    }

    static int indexOf(byte[] hay, byte[] needle) {
        return dev.nepenthe.core.internal.io.ForensicScan.indexOf(hay, needle);
    }
}
