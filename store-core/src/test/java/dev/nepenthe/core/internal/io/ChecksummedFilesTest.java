package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.FileTooNewException;
import dev.nepenthe.core.FileTooOldException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChecksummedFilesTest {

    private static Path writeSample(Path dir, int version) throws Exception {
        Path f = dir.resolve("sample.bin");
        ChecksummedFiles.write(
                f,
                "sample",
                version,
                new byte[16],
                out -> {
                    out.writeInt(1234);
                    out.writeUTF("hello");
                });
        return f;
    }

    private static String readSample(Path f) throws Exception {
        return ChecksummedFiles.read(
                f, "sample", 2, 3, (in, v) -> in.readInt() + ":" + in.readUTF());
    }

    @Test
    void roundTripLeavesNoTemporaryFile(@TempDir Path dir) throws Exception {
        Path f = writeSample(dir, 2);
        assertEquals("1234:hello", readSample(f));
        assertFalse(Files.exists(dir.resolve("sample.bin.tmp")));
    }

    @Test
    void everyFlippedByteIsDetected(@TempDir Path dir) throws Exception {
        Path f = writeSample(dir, 2);
        byte[] good = Files.readAllBytes(f);
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= 0x01;
            Files.write(f, bad);
            CorruptFileException e =
                    assertThrows(CorruptFileException.class, () -> readSample(f), "byte " + i);
            assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        }
    }

    @Test
    void truncationIsDetected(@TempDir Path dir) throws Exception {
        Path f = writeSample(dir, 2);
        byte[] good = Files.readAllBytes(f);
        for (int len : new int[] {0, 5, good.length - 1}) {
            Files.write(f, Arrays.copyOf(good, len));
            assertThrows(CorruptFileException.class, () -> readSample(f), "length " + len);
        }
    }

    @Test
    void tooOldAndTooNewAreDistinct(@TempDir Path dir) throws Exception {
        Path old = writeSample(dir, 1);
        CorruptFileException e1 = assertThrows(CorruptFileException.class, () -> readSample(old));
        assertInstanceOf(FileTooOldException.class, e1);
        assertTrue(e1.getMessage().contains("version 1 is too old"), e1.getMessage());
        Path neu = writeSample(dir, 4);
        CorruptFileException e2 = assertThrows(CorruptFileException.class, () -> readSample(neu));
        assertInstanceOf(FileTooNewException.class, e2);
        assertTrue(e2.getMessage().contains("version 4 is too new"), e2.getMessage());
    }

    @Test
    void wrongFormatNameAndUnreadBytesAreReported(@TempDir Path dir) throws Exception {
        Path f = writeSample(dir, 2);
        CorruptFileException e =
                assertThrows(
                        CorruptFileException.class,
                        () -> ChecksummedFiles.read(f, "other", 1, 9, (in, v) -> in.readInt()));
        assertTrue(
                e.getMessage().contains("expected a 'other' file, got a 'sample' file"),
                e.getMessage());
        CorruptFileException e2 =
                assertThrows(
                        CorruptFileException.class,
                        () -> ChecksummedFiles.read(f, "sample", 1, 9, (in, v) -> in.readInt()));
        assertTrue(e2.getMessage().contains("unread bytes"), e2.getMessage());
    }

    /**
     * A file past 2 GiB (an HNSW file of a million 768-d vectors is three) is checksummed and
     * parsed as a stream; reading it whole into one array could not work.
     */
    @Test
    void aFileLargerThan2GiBLoads(@TempDir Path dir) throws Exception {
        // I/O, not arithmetic: once per build is enough (the suite's scalar-kernel pass skips it).
        org.junit.jupiter.api.Assumptions.assumeFalse(
                "scalar".equals(System.getProperty("nepenthe.kernels")));
        long chunks = (2L << 30) / (1 << 20) + 8; // 2 GiB and 8 MiB of body
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.getFileStore(dir).getUsableSpace() > 3 * (chunks << 20),
                "needs about 7 GiB of free disk");
        Path f = dir.resolve("big.bin");
        byte[] chunk = new byte[1 << 20];
        ChecksummedFiles.write(
                f,
                "big",
                1,
                ChecksummedFiles.newFileId(),
                out -> {
                    out.writeLong(chunks);
                    for (long c = 0; c < chunks; c++) {
                        chunk[0] = (byte) c;
                        out.write(chunk);
                    }
                });
        assertTrue(Files.size(f) > (2L << 30));
        long read =
                ChecksummedFiles.read(
                        f,
                        "big",
                        1,
                        1,
                        (in, v) -> {
                            long n = in.readLong();
                            byte[] b = new byte[1 << 20];
                            for (long c = 0; c < n; c++) {
                                in.readFully(b);
                                if (b[0] != (byte) c) {
                                    throw new IllegalStateException(
                                            "chunk " + c + " came back as " + b[0]);
                                }
                            }
                            return n;
                        });
        assertEquals(chunks, read);
        Files.delete(f);
    }
}
