package dev.nepenthe.cluster.internal;

import static dev.nepenthe.cluster.internal.PayloadJournalTest.flip;
import static dev.nepenthe.cluster.internal.PayloadJournalTest.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.core.CorruptFileException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link PayloadJournal#open} makes of what a crash or damage leaves: torn tails are cut,
 * destroys and segment creations cut short are finished, everything else fails naming the file.
 */
class PayloadJournalRecoveryTest {

    @TempDir Path tmp;

    private static final String SEG1 = "seg-00000000000000000001";
    private static final String SEG2 = "seg-00000000000000000002";
    private static final String SEG3 = "seg-00000000000000000003";
    private static final String SEG4 = "seg-00000000000000000004";

    /** Distinct, recognisable payloads of varied lengths. */
    private static byte[] payload(long index) {
        byte[] p = new byte[40 + (int) index * 7];
        for (int i = 0; i < p.length; i++) {
            p[i] = (byte) (index * 31 + i);
        }
        return p;
    }

    /** Entries 1..3 in a rolled segment, 4..6 in the open one, all flushed. */
    private Path twoSegments(String name) throws IOException {
        Path dir = tmp.resolve(name);
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            for (long i = 1; i <= 6; i++) {
                j.append(i, payload(i));
                if (i == 3) {
                    j.roll();
                }
            }
            j.flush();
        }
        return dir;
    }

    @Test
    void aTornTailAtEveryByteOfTheLastRecordIsCutAndEverythingBeforeItKept() throws IOException {
        Path pristine = twoSegments("pristine");
        long size = Files.size(pristine.resolve(SEG4 + ".jnl"));
        long start = size - (JournalSegmentRecords.OVERHEAD + payload(6).length);
        for (long cut = start; cut < size; cut++) {
            Path dir = copy(pristine, tmp.resolve("cut-" + cut));
            Path seg = dir.resolve(SEG4 + ".jnl");
            truncateFile(seg, cut);
            try (PayloadJournal j = PayloadJournal.open(dir)) {
                for (long i = 1; i <= 5; i++) {
                    assertThat(j.read(i)).as("cut at %d, index %d", cut, i).contains(payload(i));
                }
                assertThat(j.read(6)).as("cut at %d", cut).isEmpty();
                assertThat(j.lastIndex()).isEqualTo(5);
                assertThat(Files.size(seg)).as("cut at %d", cut).isEqualTo(start);
                j.append(6, payload(6));
                j.flush();
            }
            try (PayloadJournal j = PayloadJournal.open(dir)) {
                assertThat(j.read(6)).as("cut at %d", cut).contains(payload(6));
            }
        }
    }

    @Test
    void aNewestSegmentTornInsideItsOnlyRecordIsRemovedWithItsKey() throws IOException {
        Path pristine = tmp.resolve("pristine");
        try (PayloadJournal j = PayloadJournal.open(pristine)) {
            j.append(1, payload(1));
            j.append(2, payload(2));
            j.roll();
            j.append(3, payload(3));
            j.flush();
        }
        long size = Files.size(pristine.resolve(SEG3 + ".jnl"));
        for (long cut = 0; cut < size; cut++) {
            Path dir = copy(pristine, tmp.resolve("cut-" + cut));
            truncateFile(dir.resolve(SEG3 + ".jnl"), cut);
            try (PayloadJournal j = PayloadJournal.open(dir)) {
                assertThat(names(j.files())).containsExactly(SEG1 + ".jnl", SEG1 + ".key");
                assertThat(j.read(2)).contains(payload(2));
                assertThat(j.read(3)).isEmpty();
                assertThat(j.lastIndex()).isEqualTo(2);
            }
        }
    }

    @Test
    void zerosPastTheLastRecordAreATornTail() throws IOException {
        Path dir = twoSegments("j");
        Path seg = dir.resolve(SEG4 + ".jnl");
        long size = Files.size(seg);
        Files.write(seg, new byte[200], StandardOpenOption.APPEND);
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(j.read(6)).contains(payload(6));
            assertThat(Files.size(seg)).isEqualTo(size);
        }
    }

    @Test
    void aFlippedByteInAMiddleRecordFailsNamingTheFileAndOffset() throws IOException {
        Path pristine = twoSegments("pristine");
        long second = JournalSegmentRecords.OVERHEAD + payload(4).length;
        // In the newest segment, valid data follows the damage: not a torn tail.
        Path dir = copy(pristine, tmp.resolve("newest"));
        Path seg = dir.resolve(SEG4 + ".jnl");
        flip(seg, second + JournalSegmentRecords.HEADER_BYTES + 3);
        assertThatThrownBy(() -> PayloadJournal.open(dir))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(seg.toString())
                .hasMessageContaining("record at offset " + second)
                .hasMessageContaining("CRC32C expected")
                .hasMessageContaining("more data follows");
        // In a closed segment even its last record is never a torn tail.
        Path dir2 = copy(pristine, tmp.resolve("closed"));
        Path older = dir2.resolve(SEG1 + ".jnl");
        flip(older, Files.size(older) - 10);
        assertThatThrownBy(() -> PayloadJournal.open(dir2))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(older.toString())
                .hasMessageContaining("closed and forced");
        // A damaged length field in a closed segment.
        Path dir3 = copy(pristine, tmp.resolve("length"));
        Path lengthDamaged = dir3.resolve(SEG1 + ".jnl");
        flip(lengthDamaged, JournalSegmentRecords.INDEX_BYTES);
        assertThatThrownBy(() -> PayloadJournal.open(dir3))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(lengthDamaged.toString())
                .hasMessageContaining("length field says")
                .hasMessageContaining("record at offset 0");
    }

    @Test
    void aKeyFileOfTheWrongSizeFails() throws IOException {
        for (int size : new int[] {0, 31, 33}) {
            Path dir = twoSegments("size-" + size);
            Path key = dir.resolve(SEG1 + ".key");
            byte[] k = Files.readAllBytes(key);
            Files.write(key, Arrays.copyOf(k, size));
            assertThatThrownBy(() -> PayloadJournal.open(dir))
                    .isInstanceOf(CorruptFileException.class)
                    .hasMessageContaining(key.toString())
                    .hasMessageContaining("expected 32 bytes, found " + size);
        }
    }

    @Test
    void aZeroedKeyIsADestroyCutShortAndItsSegmentIsRemoved() throws IOException {
        Path dir = twoSegments("j");
        // The crash came after the key's overwrite was forced, before either deletion.
        Files.write(dir.resolve(SEG1 + ".key"), new byte[32]);
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(names(j.files())).containsExactly(SEG4 + ".jnl", SEG4 + ".key");
            for (long i = 1; i <= 3; i++) {
                assertThat(j.read(i)).isEmpty();
                assertThat(j.decryptable(i)).isFalse();
            }
            assertThat(j.read(4)).contains(payload(4));
            assertThat(j.firstIndex()).isEqualTo(4);
        }
        // ... and after the key's deletion, before the segment's.
        Path dir2 = twoSegments("j2");
        Files.delete(dir2.resolve(SEG1 + ".key"));
        try (PayloadJournal j = PayloadJournal.open(dir2)) {
            assertThat(names(j.files())).containsExactly(SEG4 + ".jnl", SEG4 + ".key");
            assertThat(j.read(2)).isEmpty();
        }
    }

    @Test
    void aSegmentWithoutItsKeyAfterALiveOneFails() throws IOException {
        Path dir = tmp.resolve("j");
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            for (long i = 1; i <= 3; i++) {
                j.append(i, payload(i));
                j.roll();
            }
        }
        Files.delete(dir.resolve(SEG2 + ".key"));
        assertThatThrownBy(() -> PayloadJournal.open(dir))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(dir.resolve(SEG2 + ".jnl").toString())
                .hasMessageContaining("expected the key file " + SEG2 + ".key")
                .hasMessageContaining("found none");
        assertThat(dir.resolve(SEG2 + ".jnl")).exists();
    }

    @Test
    void aKeyLeftByACrashWhileCreatingTheNewestSegmentIsRemoved() throws IOException {
        Path dir = twoSegments("j");
        Files.write(
                dir.resolve("seg-00000000000000000007.key"),
                Arrays.copyOf(payload(1), 32),
                StandardOpenOption.CREATE_NEW);
        Files.write(dir.resolve("seg-00000000000000000007.key.tmp"), new byte[5]);
        try (PayloadJournal j = PayloadJournal.open(dir)) {
            assertThat(names(j.files()))
                    .containsExactly(SEG1 + ".jnl", SEG1 + ".key", SEG4 + ".jnl", SEG4 + ".key");
            j.append(7, payload(7));
            assertThat(j.read(7)).contains(payload(7));
        }
    }

    @Test
    void aKeyWithoutItsSegmentThatIsNotTheNewestFails() throws IOException {
        Path dir = twoSegments("j");
        Files.delete(dir.resolve(SEG1 + ".jnl"));
        assertThatThrownBy(() -> PayloadJournal.open(dir))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(dir.resolve(SEG1 + ".key").toString())
                .hasMessageContaining("expected the segment file " + SEG1 + ".jnl");
    }

    @Test
    void aSegmentWhoseRecordsDoNotMatchItsNameFails() throws IOException {
        Path dir = twoSegments("j");
        Files.move(dir.resolve(SEG4 + ".jnl"), dir.resolve(SEG2 + ".jnl"));
        Files.move(dir.resolve(SEG4 + ".key"), dir.resolve(SEG2 + ".key"));
        assertThatThrownBy(() -> PayloadJournal.open(dir))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(dir.resolve(SEG2 + ".jnl").toString())
                .hasMessageContaining("expected the first record to carry index 2")
                .hasMessageContaining("found 4");
    }

    @Test
    void aFileTheJournalDoesNotWriteFails() throws IOException {
        Path dir = twoSegments("j");
        Files.writeString(dir.resolve("notes.txt"), "hello");
        assertThatThrownBy(() -> PayloadJournal.open(dir))
                .isInstanceOf(CorruptFileException.class)
                .hasMessageContaining(dir.resolve("notes.txt").toString());
    }

    private static Path copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
        return to;
    }

    private static void truncateFile(Path file, long size) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }
}
