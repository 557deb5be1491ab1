package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged or forged replica image is refused with a message naming what was expected and what
 * arrived, leaves the target folders as they were (absent, or empty), and a sound image is read up
 * to its end frame and not a byte further. Forged images are built here from the documented format
 * ({@code ReplicaImage}), independently of the writer, so each carries exactly one fault.
 */
class ReplicaCopyStreamTest {

    @TempDir Path tmp;

    private byte[] image;

    @BeforeEach
    void aSmallStoresImage() throws IOException {
        Path key = ReplicaCopyTest.keyFile(tmp, "group.key", 9);
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("leader"), ReplicaCopyTest.options(tmp.resolve("lk"), key))) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("notes", ReplicaCopyTest.DIM, Metric.COSINE));
            Random r = new Random(5);
            for (int i = 0; i < 20; i++) {
                c.upsert(
                        VectorRecord.builder("r" + i)
                                .subject("s" + i % 3)
                                .vector(ReplicaCopyTest.vector(r))
                                .build());
            }
            image = ReplicaCopyTest.copyOf(store);
        }
    }

    /** Reads {@code bytes} into absent folders and expects a refusal naming both phrases. */
    private void refused(byte[] bytes, String expected, String arrived) throws IOException {
        Path store = tmp.resolve("r").resolve("store");
        Path keys = tmp.resolve("r").resolve("keys");
        IOException e =
                assertThrows(
                        IOException.class,
                        () -> ReplicaCopy.read(new ByteArrayInputStream(bytes), store, keys));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().contains(arrived), e.getMessage());
        assertFalse(Files.exists(store), "the data folder the read made is removed");
        assertFalse(Files.exists(keys), "the keystore folder the read made is removed");
    }

    @Test
    void aFlippedByteInAFileFailsItsChecksumAndNothingStays() throws IOException {
        byte[] bad = image.clone();
        // Inside keys.db, past its frame's path and length: a byte of the file's contents.
        int at = ForensicScan.indexOf(image, "keys.db".getBytes(StandardCharsets.UTF_8));
        assertTrue(at > 0);
        bad[at + 7 + 8 + 100] ^= 0x10;
        refused(bad, "checksum of keys:keys.db: expected CRC32C", "the bytes that arrived give");
    }

    @Test
    void aTruncatedImageIsRefusedWhereverItIsCut() throws IOException {
        Random r = new Random(3);
        for (int cut :
                new int[] {
                    0,
                    3,
                    20,
                    image.length / 3,
                    image.length / 2,
                    image.length - 33,
                    image.length - 1
                }) {
            refused(Arrays.copyOf(image, cut), "expected", "ended");
        }
        int cut = 1 + r.nextInt(image.length - 2);
        refused(Arrays.copyOf(image, cut), "expected", "ended");
    }

    @Test
    void aStreamThatIsNotAnImageIsRefusedByItsMagic() throws IOException {
        byte[] bad = image.clone();
        bad[0] = 'X';
        refused(bad, "expected the magic number 0x4e505243", "got 0x58505243");
    }

    @Test
    void pathsThatLeaveTheirFolderOrComeTwiceAreRefused() throws IOException {
        refused(
                new Forged().file(1, "../x", "evil").end(),
                "expected a relative path",
                "a '..' name");
        refused(
                new Forged().file(1, "collections/../../x", "evil").end(),
                "expected a relative path",
                "a '..' name");
        refused(
                new Forged().file(2, "/etc/x", "evil").end(),
                "expected a relative path",
                "an absolute path");
        refused(
                new Forged().file(1, "a//b", "x").end(),
                "expected a relative path",
                "an empty name");
        refused(new Forged().file(1, "", "x").end(), "expected a relative path", "an empty path");
        refused(
                new Forged().file(1, "a/b", "x").file(1, "a/b", "y").end(),
                "expected each path once",
                "data:a/b a second time");
        refused(new Forged().file(7, "a", "x").end(), "expected a root tag", "got 7");
    }

    @Test
    void unexpectedFramesAndAWrongEndAreRefused() throws IOException {
        Forged unknown = new Forged().file(1, "a", "x");
        unknown.data.writeByte('Z');
        refused(
                unknown.bytes(),
                "expected a folder frame ('D'), a file frame ('F')",
                "got byte 0x5a");
        byte[] noEnd = new Forged().file(1, "a", "x").bytes();
        refused(noEnd, "the end frame ('E')", "ended before the end frame");
        Forged miscounted = new Forged().file(1, "a", "x");
        refused(miscounted.end(2, 1), "states 2 files of 1 bytes", "held 1 files of 1 bytes");
        byte[] badDigest = new Forged().file(1, "a", "x").end();
        badDigest[badDigest.length - 1] ^= 1;
        refused(badDigest, "expected the stream's SHA-256", "the bytes that arrived give");
    }

    @Test
    void aForgedImageThatIsSoundIsReadAsItSays() throws IOException {
        byte[] ok = new Forged().folder(1, "empty").file(1, "a/b", "xyz").file(2, "k", "").end();
        ReplicaCopy.Summary s =
                ReplicaCopy.read(new ByteArrayInputStream(ok), tmp.resolve("s"), tmp.resolve("k"));
        assertEquals(new ReplicaCopy.Summary(2, 3), s);
        assertEquals("xyz", Files.readString(tmp.resolve("s/a/b")));
        assertTrue(Files.isDirectory(tmp.resolve("s/empty")));
        assertEquals(0, Files.size(tmp.resolve("k/k")));
    }

    @Test
    void bytesAfterTheEndFrameAreLeftForTheCaller() throws IOException {
        byte[] trailer = "NEXT-MESSAGE".getBytes(StandardCharsets.US_ASCII);
        byte[] both = Arrays.copyOf(image, image.length + trailer.length);
        System.arraycopy(trailer, 0, both, image.length, trailer.length);
        InputStream in = new ByteArrayInputStream(both);
        ReplicaCopy.read(in, tmp.resolve("s"), tmp.resolve("k"));
        assertEquals('N', in.read(), "the next byte is the caller's");
        assertEquals(trailer.length - 1, in.readAllBytes().length);
    }

    @Test
    void foldersThatExistEmptyAreLeftEmptyOnFailureAndFullOnesAreRefused() throws IOException {
        Path store = Files.createDirectories(tmp.resolve("e/store"));
        Path keys = Files.createDirectories(tmp.resolve("e/keys"));
        byte[] bad = Arrays.copyOf(image, image.length - 5);
        assertThrows(
                IOException.class,
                () -> ReplicaCopy.read(new ByteArrayInputStream(bad), store, keys));
        for (Path p : List.of(store, keys)) {
            assertTrue(Files.isDirectory(p), p + " kept");
            try (Stream<Path> s = Files.list(p)) {
                assertEquals(0, s.count(), p + " left empty");
            }
        }
        Files.writeString(store.resolve("stray"), "x");
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ReplicaCopy.read(new ByteArrayInputStream(image), store, keys));
        assertTrue(
                e.getMessage().contains("is not empty; expected it absent or empty"),
                e.getMessage());
        assertEquals(
                "x", Files.readString(store.resolve("stray")), "nothing of the caller's touched");
    }

    /** Builds an image frame by frame, per the documented format. */
    private static final class Forged {
        final ByteArrayOutputStream raw = new ByteArrayOutputStream();
        final DataOutputStream data = new DataOutputStream(raw);
        int files;
        long bytes;

        Forged() throws IOException {
            data.writeInt(0x4E505243);
            byte[] name = "nepenthe-replica-copy".getBytes(StandardCharsets.UTF_8);
            data.writeShort(name.length);
            data.write(name);
            data.writeInt(1);
        }

        Forged folder(int root, String path) throws IOException {
            data.writeByte('D');
            data.writeByte(root);
            path(path);
            return this;
        }

        Forged file(int root, String path, String content) throws IOException {
            byte[] c = content.getBytes(StandardCharsets.UTF_8);
            data.writeByte('F');
            data.writeByte(root);
            path(path);
            data.writeLong(c.length);
            data.write(c);
            CRC32C crc = new CRC32C();
            crc.update(c);
            data.writeInt((int) crc.getValue());
            files++;
            bytes += c.length;
            return this;
        }

        private void path(String path) throws IOException {
            byte[] p = path.getBytes(StandardCharsets.UTF_8);
            data.writeShort(p.length);
            data.write(p);
        }

        byte[] bytes() {
            return raw.toByteArray();
        }

        byte[] end() throws IOException {
            return end(files, bytes);
        }

        byte[] end(int count, long total) throws IOException {
            data.writeByte('E');
            data.writeInt(count);
            data.writeLong(total);
            try {
                data.write(MessageDigest.getInstance("SHA-256").digest(raw.toByteArray()));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            return raw.toByteArray();
        }
    }
}
