package dev.nepenthe.cluster.internal;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal's contract one behaviour at a time: order, rolls, destroys, failures. */
class PayloadJournalTest {

    /** 64 bytes no random ciphertext or key will contain by chance. */
    private static final byte[] SECRET =
            "alice.liddell@example.org|+1-555-123-4567|DOB 1852-05-04|ssn-x01".getBytes(US_ASCII);

    @TempDir Path tmp;

    @Test
    void refusesAnIndexNotGreaterThanTheLast() throws IOException {
        try (PayloadJournal j = PayloadJournal.open(tmp.resolve("j"))) {
            j.append(5, bytes("five"));
            assertThatThrownBy(() -> j.append(5, bytes("again")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected an index > 5")
                    .hasMessageContaining("got 5");
            assertThatThrownBy(() -> j.append(3, bytes("older")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("> 5")
                    .hasMessageContaining("got 3");
            assertThatThrownBy(() -> j.append(-1, bytes("neg")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("got -1");
            assertThat(j.lastIndex()).isEqualTo(5);
            assertThat(j.read(5)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("five")));
            assertThat(j.read(3)).isEmpty();
        }
    }

    @Test
    void emptyPayloadsAndGapsReadBack() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            j.append(1, new byte[0]);
            j.append(4, bytes("four"));
            j.flush();
        }
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(j.read(1)).hasValueSatisfying(v -> assertThat(v).isEmpty());
            assertThat(j.read(2)).isEmpty();
            assertThat(j.read(4)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("four")));
            assertThat(j.firstIndex()).isEqualTo(1);
            assertThat(j.lastIndex()).isEqualTo(4);
        }
    }

    @Test
    void rollingAnEmptyJournalIsANoOpAndEachRollStartsASegmentWithItsOwnKey() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            j.roll();
            j.roll();
            assertThat(j.files()).isEmpty();
            j.append(1, bytes("one"));
            j.roll();
            j.roll();
            j.append(2, bytes("two"));
            assertThat(names(j.files()))
                    .containsExactly(
                            "seg-00000000000000000001.jnl",
                            "seg-00000000000000000001.key",
                            "seg-00000000000000000002.jnl",
                            "seg-00000000000000000002.key");
            byte[] k1 = Files.readAllBytes(dir.resolve("seg-00000000000000000001.key"));
            byte[] k2 = Files.readAllBytes(dir.resolve("seg-00000000000000000002.key"));
            assertThat(k1).hasSize(32);
            assertThat(k2).hasSize(32).isNotEqualTo(k1);
        }
    }

    @Test
    void rollsOnItsOwnPastTheSegmentSize() throws IOException {
        try (PayloadJournal j =
                PayloadJournal.open(tmp.resolve("j"), 1000, (ch, f) -> ch.force(true))) {
            for (long i = 1; i <= 10; i++) {
                j.append(i, new byte[300]);
            }
            // 344-byte records: a segment passes 1000 bytes at its third record
            assertThat(names(j.files()))
                    .filteredOn(n -> n.endsWith(".jnl"))
                    .containsExactly(
                            "seg-00000000000000000001.jnl",
                            "seg-00000000000000000004.jnl",
                            "seg-00000000000000000007.jnl",
                            "seg-00000000000000000010.jnl");
        }
    }

    @Test
    void destroyMakesThePayloadUnreadableAndLeavesNoPlaintextOrKeyOnDisk() throws IOException {
        Path dir = tmp.resolve("j");
        // The scanner is proven able to find the payload: planted in a file of our own.
        Path control = tmp.resolve("control");
        Files.createDirectories(control);
        Files.write(control.resolve("plain.bin"), concat(bytes("xx"), SECRET, bytes("yy")));
        assertThat(ForensicScan.filesContaining(List.of(control), List.of(SECRET)))
                .containsExactly(control.resolve("plain.bin"));

        try (PayloadJournal j = PayloadJournal.open(dir)) {
            j.append(1, bytes("before"));
            j.append(2, SECRET);
            j.append(3, bytes("forget entry"));
            j.roll(); // the caller rolls at every forget entry
            j.append(4, bytes("after"));
            j.flush();
            Path key = dir.resolve("seg-00000000000000000001.key");
            byte[] keyBytes = Files.readAllBytes(key);

            // Control: before the destroy the payload reads back, and yet no file holds it.
            assertThat(j.read(2)).hasValueSatisfying(v -> assertThat(v).isEqualTo(SECRET));
            assertThat(j.decryptable(2)).isTrue();
            assertThat(ForensicScan.filesContaining(List.of(dir), List.of(SECRET))).isEmpty();
            assertThat(ForensicScan.filesContaining(List.of(dir), List.of(keyBytes)))
                    .containsExactly(key);

            assertThat(j.destroyThrough(3)).isEqualTo(1);

            assertThat(j.read(2)).isEmpty();
            assertThat(j.read(1)).isEmpty();
            assertThat(j.decryptable(2)).isFalse();
            assertThat(key).doesNotExist();
            assertThat(dir.resolve("seg-00000000000000000001.jnl")).doesNotExist();
            assertThat(ForensicScan.filesContaining(List.of(dir), List.of(SECRET, keyBytes)))
                    .isEmpty();
            assertThat(j.read(4)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("after")));
            assertThat(j.firstIndex()).isEqualTo(4);
            assertThat(j.lastIndex()).isEqualTo(4);
            assertThat(j.files()).allMatch(f -> f.getFileName().toString().startsWith("seg-0000"));
            assertThat(names(j.files()))
                    .containsExactly(
                            "seg-00000000000000000004.jnl", "seg-00000000000000000004.key");
        }
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(j.read(2)).isEmpty();
            assertThat(j.read(4)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("after")));
        }
    }

    @Test
    void destroyZeroesEveryKeyInPlaceAndForcesItBeforeDeletingAnything() throws IOException {
        Path dir = tmp.resolve("j");
        List<String> seen = new ArrayList<>();
        PayloadJournal.Fsync watching =
                (ch, f) -> {
                    String name = f.getFileName().toString();
                    if (name.endsWith(".key")) {
                        // what is about to be forced, and which segments still exist
                        byte[] content = Files.readAllBytes(f);
                        boolean zeros = Arrays.equals(content, new byte[32]);
                        seen.add(
                                name
                                        + (zeros ? " zeros" : " key")
                                        + " jnl1="
                                        + Files.exists(dir.resolve("seg-00000000000000000001.jnl"))
                                        + " jnl2="
                                        + Files.exists(
                                                dir.resolve("seg-00000000000000000002.jnl")));
                    }
                    ch.force(true);
                };
        try (PayloadJournal j = PayloadJournal.open(dir, PayloadJournal.ROLL_BYTES, watching)) {
            j.append(1, bytes("a"));
            j.roll();
            j.append(2, bytes("b"));
            j.roll();
            j.append(3, bytes("c"));
            seen.clear();
            assertThat(j.destroyThrough(2)).isEqualTo(2);
            assertThat(seen)
                    .containsExactly(
                            "seg-00000000000000000001.key zeros jnl1=true jnl2=true",
                            "seg-00000000000000000002.key zeros jnl1=true jnl2=true");
            assertThat(names(j.files()))
                    .containsExactly(
                            "seg-00000000000000000003.jnl", "seg-00000000000000000003.key");
        }
    }

    @Test
    void concurrentReadersSeeWholeRecordsWhileAWriterAppendsFlushesAndRolls() throws Exception {
        int count = 3000;
        try (PayloadJournal j =
                PayloadJournal.open(tmp.resolve("j"), 8192, (ch, f) -> ch.force(true))) {
            AtomicLong written = new AtomicLong(0);
            AtomicReference<Throwable> wrong = new AtomicReference<>();
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    for (long i = 1; i <= count; i++) {
                                        j.append(i, patterned(i));
                                        if (i % 16 == 0) {
                                            j.flush();
                                        }
                                        if (i % 500 == 0) {
                                            j.roll();
                                        }
                                        written.set(i);
                                    }
                                } catch (Throwable t) {
                                    wrong.compareAndSet(null, t);
                                }
                            });
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                long seed = r;
                readers.add(
                        new Thread(
                                () -> {
                                    SplittableRandom rnd = new SplittableRandom(seed);
                                    try {
                                        while (written.get() < count && wrong.get() == null) {
                                            long upTo = written.get();
                                            if (upTo == 0) {
                                                continue;
                                            }
                                            long i = rnd.nextLong(1, upTo + 1);
                                            Optional<byte[]> got = j.read(i);
                                            if (got.isEmpty()
                                                    || !Arrays.equals(got.get(), patterned(i))) {
                                                throw new AssertionError(
                                                        "index " + i + " read back wrong");
                                            }
                                        }
                                    } catch (Throwable t) {
                                        wrong.compareAndSet(null, t);
                                    }
                                }));
            }
            writer.start();
            readers.forEach(Thread::start);
            writer.join();
            for (Thread t : readers) {
                t.join();
            }
            assertThat(wrong.get()).isNull();
            assertThat(j.lastIndex()).isEqualTo(count);
        }
    }

    @Test
    void destroyRollsTheOpenSegmentOnlyWhenAllItsEntriesAreCovered() throws IOException {
        try (PayloadJournal j = PayloadJournal.open(tmp.resolve("j"))) {
            j.append(1, bytes("a"));
            j.append(2, bytes("b"));
            // entry 2 is past the forget at 1: the open segment stays
            assertThat(j.destroyThrough(1)).isZero();
            assertThat(j.read(1)).isPresent();
            assertThat(j.destroyThrough(2)).isEqualTo(1);
            assertThat(j.read(1)).isEmpty();
            assertThat(j.read(2)).isEmpty();
            assertThat(j.files()).isEmpty();
            assertThat(j.firstIndex()).isZero();
            assertThat(j.lastIndex()).isEqualTo(2);
            assertThatThrownBy(() -> j.append(2, bytes("again")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("> 2");
            assertThatThrownBy(() -> j.truncate(2))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected an index > 2")
                    .hasMessageContaining("got 2");
            j.append(3, bytes("c"));
            assertThat(j.read(3)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("c")));
        }
    }

    @Test
    void truncateCutsTheSegmentAndAppendsContinueFromThere() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            for (long i = 1; i <= 4; i++) {
                j.append(i, bytes("v" + i));
            }
            j.roll();
            j.append(5, bytes("v5"));
            j.truncate(3);
            assertThat(j.lastIndex()).isEqualTo(2);
            assertThat(j.read(3)).isEmpty();
            assertThat(j.read(5)).isEmpty();
            assertThat(names(j.files()))
                    .containsExactly(
                            "seg-00000000000000000001.jnl", "seg-00000000000000000001.key");
            assertThat(Files.size(dir.resolve("seg-00000000000000000001.jnl")))
                    .isEqualTo(2L * (JournalSegmentRecords.OVERHEAD + 2));
            j.append(3, bytes("w3"));
            j.flush();
        }
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(j.read(2)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("v2")));
            assertThat(j.read(3)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("w3")));
            assertThat(j.read(4)).isEmpty();
            assertThat(j.lastIndex()).isEqualTo(3);
        }
    }

    @Test
    void aFailedFsyncFailsTheJournalForGoodAndIsNeverRetried() throws IOException {
        AtomicInteger forces = new AtomicInteger();
        AtomicInteger failAt = new AtomicInteger(Integer.MAX_VALUE);
        PayloadJournal.Fsync fsync =
                (ch, f) -> {
                    if (forces.incrementAndGet() >= failAt.get()) {
                        throw new IOException("Input/output error (injected)");
                    }
                    ch.force(true);
                };
        Path dir = tmp.resolve("j");
        PayloadJournal j = PayloadJournal.open(dir, PayloadJournal.ROLL_BYTES, fsync);
        j.append(1, bytes("one"));
        j.flush();
        j.append(2, bytes("two"));
        failAt.set(forces.get() + 1);
        assertThatThrownBy(j::flush)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("seg-00000000000000000001.jnl")
                .hasMessageContaining("injected");
        int after = forces.get();
        failAt.set(Integer.MAX_VALUE); // the disk "recovers": the journal must not believe it
        assertThatThrownBy(j::flush)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("failed earlier")
                .hasMessageContaining("injected");
        assertThatThrownBy(() -> j.append(3, bytes("three")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("injected");
        assertThatThrownBy(j::roll).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> j.truncate(2)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> j.destroyThrough(2)).isInstanceOf(IllegalStateException.class);
        j.close();
        assertThat(forces.get()).as("no fsync after the failed one").isEqualTo(after);
        // Reopening recovers what reached the file.
        try (PayloadJournal again = PayloadJournal.open(dir)) {
            assertThat(again.read(1))
                    .hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("one")));
        }
    }

    @Test
    void aRecordDamagedUnderAnOpenJournalFailsItsReadNamingFileAndIndex() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            j.append(7, bytes("seven"));
            j.append(8, bytes("eight"));
            j.flush();
            Path seg = dir.resolve("seg-00000000000000000007.jnl");
            flip(seg, JournalSegmentRecords.HEADER_BYTES + 1);
            assertThatThrownBy(() -> j.read(7))
                    .isInstanceOf(CorruptFileException.class)
                    .hasMessageContaining(seg.toString())
                    .hasMessageContaining("index 7")
                    .hasMessageContaining("CRC32C expected");
            assertThat(j.read(8)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("eight")));
        }
    }

    @Test
    void aKeyThatDoesNotMatchFailsDecryptionNamingFileAndIndex() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            j.append(1, bytes("one"));
            j.flush();
        }
        Path key = dir.resolve("seg-00000000000000000001.key");
        byte[] k = Files.readAllBytes(key);
        k[0] ^= 1;
        Files.write(key, k);
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThatThrownBy(() -> j.read(1))
                    .isInstanceOf(CorruptFileException.class)
                    .hasMessageContaining("seg-00000000000000000001.jnl")
                    .hasMessageContaining("index 1")
                    .hasMessageContaining("does not decrypt");
        }
    }

    @Test
    void closedJournalRefusesEverything() throws IOException {
        PayloadJournal j = PayloadJournal.open(tmp.resolve("j"));
        j.close();
        assertThatThrownBy(() -> j.append(1, bytes("x")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> j.read(1)).isInstanceOf(IllegalStateException.class);
    }

    /** A payload that says which index it belongs to. */
    private static byte[] patterned(long index) {
        byte[] p = new byte[(int) (index % 97) + 8];
        for (int i = 0; i < p.length; i++) {
            p[i] = (byte) (index * 131 + i);
        }
        return p;
    }

    static byte[] bytes(String s) {
        return s.getBytes(US_ASCII);
    }

    static List<String> names(List<Path> files) {
        return files.stream().map(f -> f.getFileName().toString()).toList();
    }

    static void flip(Path file, long offset) throws IOException {
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            ch.write(b, offset);
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
