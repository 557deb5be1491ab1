package dev.nepenthe.core.internal.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.NIOFSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deleting a text index file destroys its key even when the file is damaged: a copy of the file (a
 * backup, a disk image) must never stay readable because its original's header was.
 */
class EncryptedDirectoryDeleteTest {

    @TempDir Path tmp;

    private static MasterKey master() {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) 9);
        return MasterKey.of(k);
    }

    /** Writes one file and returns the keystore's key count with it. */
    private static int writeFile(EncryptedDirectory dir, Keystore keystore, String name)
            throws IOException {
        try (IndexOutput out = dir.createOutput(name, IOContext.DEFAULT)) {
            out.writeBytes(new byte[100], 100);
        }
        keystore.force();
        return keystore.size();
    }

    /** Overwrites {@code length} bytes of the file at {@code offset}. */
    private static void damage(Path file, int offset, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[length]), offset);
        }
    }

    @Test
    void aFileWithADamagedMagicHasItsKeyDestroyedOnDelete() throws IOException {
        MasterKey mk = master();
        Path folder = tmp.resolve("text");
        Files.createDirectories(folder);
        try (Keystore keystore = Keystore.open(tmp.resolve("keys"), mk)) {
            // A directory that never saw the file (a new process): only the header can name the
            // key.
            try (EncryptedDirectory writer =
                    new EncryptedDirectory(
                            new NIOFSDirectory(folder), keystore, new KeyedHash(mk), "c1")) {
                assertEquals(
                        1,
                        writeFile(writer, keystore, "_0.cfs"),
                        "control: the file's key is in the keystore");
            }
            damage(folder.resolve("_0.cfs"), 0, 4);
            try (EncryptedDirectory fresh =
                    new EncryptedDirectory(
                            new NIOFSDirectory(folder), keystore, new KeyedHash(mk), "c1")) {
                fresh.deleteFile("_0.cfs");
            }
            assertFalse(Files.exists(folder.resolve("_0.cfs")));
            assertEquals(0, keystore.size(), "the damaged file's key is destroyed");
        }
    }

    @Test
    void aFileWhoseKeyIdIsDamagedHasItsKeyDestroyedByTheDirectoryThatWroteIt() throws IOException {
        MasterKey mk = master();
        Path folder = tmp.resolve("text");
        Files.createDirectories(folder);
        try (Keystore keystore = Keystore.open(tmp.resolve("keys"), mk);
                EncryptedDirectory dir =
                        new EncryptedDirectory(
                                new NIOFSDirectory(folder), keystore, new KeyedHash(mk), "c1")) {
            assertEquals(1, writeFile(dir, keystore, "_1.cfs"));
            damage(folder.resolve("_1.cfs"), 4, 16); // the key id itself
            dir.deleteFile("_1.cfs");
            assertEquals(
                    0, keystore.size(), "the key the directory wrote the file under is destroyed");
            assertTrue(Files.notExists(folder.resolve("_1.cfs")));
        }
    }
}
