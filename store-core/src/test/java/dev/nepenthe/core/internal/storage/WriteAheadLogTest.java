package dev.nepenthe.core.internal.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
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

    @TempDir Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private List<String> replayAll(WriteAheadLog.RecoveryReport[] report) throws IOException {
        List<String> out = new ArrayList<>();
        WriteAheadLog wal =
                WriteAheadLog.open(
                        dir,
                        Durability.SYNC,
                        (gen, p) -> out.add(new String(p, StandardCharsets.UTF_8)),
                        report);
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
        int frame =
                8
                        + 4
                        + 4
                        + "torn-entry-payload"
                                .length(); // length, crc, count, entry length, payload
        for (int cut : new int[] {5, 20}) { // inside the length/crc prefix; inside the payload
            Files.write(newest, Arrays.copyOf(bytes, bytes.length - frame + cut));
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
        assertTrue(
                e.getMessage().contains(f.toString()) && e.getMessage().contains("does not verify"),
                e.getMessage());
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
                fs.add(
                        pool.submit(
                                () -> {
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

    @Test
    void aBatchCutShortIsDroppedWholeNeverHalfApplied() throws IOException {
        Path newest;
        try (WriteAheadLog wal = WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> {}, null)) {
            wal.sync(wal.append(b("before")));
            wal.sync(wal.append(List.of(b("batch-first"), b("batch-second"))));
            newest = dir.resolve(String.format("wal-%016d.log", wal.generation()));
        }
        byte[] bytes = Files.readAllBytes(newest);
        int second = indexOf(bytes, b("batch-second"));
        // The first entry of the batch is on disk whole; the second is cut in its middle.
        Files.write(newest, Arrays.copyOf(bytes, second + 4));
        WriteAheadLog.RecoveryReport[] r = new WriteAheadLog.RecoveryReport[1];
        assertEquals(List.of("before"), replayAll(r));
        assertEquals(1, r[0].entries());
    }

    @Test
    void aFailedFsyncIsNeverRetriedAndTheLogTakesNothingMore() throws IOException {
        FaultPlan plan = FaultPlan.none(1);
        Path faulty = FaultyFileSystem.wrap(dir, plan);
        WriteAheadLog wal = WriteAheadLog.open(faulty, Durability.SYNC, (g, p) -> {}, null);
        wal.sync(wal.append(b("durable")));
        plan.failNth(FaultPlan.Op.FSYNC, 1, false); // one failure: a second fsync would succeed
        long lost = wal.append(b("never-acknowledged"));
        IOException first = assertThrows(IOException.class, () -> wal.sync(lost));
        assertTrue(first.getMessage().contains("Input/output error"), first.getMessage());
        IOException again = assertThrows(IOException.class, () -> wal.sync(lost));
        assertTrue(again.getMessage().contains("failed earlier"), again.getMessage());
        assertThrows(IOException.class, () -> wal.append(b("after")));
        assertThrows(IOException.class, wal::rotate);
        wal.close(); // closes without an fsync
        assertEquals(
                1,
                plan.injectedCount(),
                "the failed fsync was the only one tried after the failure");
        plan.heal();
        // The page cache dropped what the failed fsync covered (the fault plan's model of Linux).
        assertEquals(List.of("durable"), replayAll(null));
    }

    @Test
    void aFullDiskDuringAnAppendLeavesATornFrameThatRecoveryDrops() throws IOException {
        FaultPlan plan = FaultPlan.none(2);
        Path faulty = FaultyFileSystem.wrap(dir, plan);
        WriteAheadLog wal = WriteAheadLog.open(faulty, Durability.SYNC, (g, p) -> {}, null);
        wal.sync(wal.append(b("durable")));
        plan.diskFullAfter(20); // the next frame is 8 + 4 + 2 * (4 + 40) bytes: cut after 20
        IOException e =
                assertThrows(
                        IOException.class,
                        () -> wal.sync(wal.append(List.of(new byte[40], new byte[40]))));
        assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
        assertThrows(IOException.class, () -> wal.append(b("after")));
        wal.close();
        plan.heal();
        WriteAheadLog.RecoveryReport[] r = new WriteAheadLog.RecoveryReport[1];
        assertEquals(List.of("durable"), replayAll(r));
        assertEquals(20, r[0].tornBytesDropped());
    }

    @Test
    void version1LogsWithAFramePerEntryAreStillRead() throws IOException {
        byte[] name = WriteAheadLog.FORMAT.getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(256);
        buf.putInt(0x4E50574C).putShort((short) name.length).put(name).putInt(1).putLong(1);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(buf.array(), 0, buf.position());
        buf.putInt((int) crc.getValue());
        for (String entry : List.of("v1-first", "v1-second")) {
            byte[] p = b(entry);
            crc = new java.util.zip.CRC32C();
            crc.update(p);
            buf.putInt(p.length).putInt((int) crc.getValue()).put(p);
        }
        Files.write(
                dir.resolve(String.format("wal-%016d.log", 1)),
                Arrays.copyOf(buf.array(), buf.position()));
        assertEquals(List.of("v1-first", "v1-second"), replayAll(null));
    }

    static int indexOf(byte[] hay, byte[] needle) {
        return dev.nepenthe.core.internal.io.ForensicScan.indexOf(hay, needle);
    }
}
