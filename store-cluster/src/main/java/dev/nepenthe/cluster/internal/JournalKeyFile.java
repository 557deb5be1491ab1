package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * A journal segment's key file: the 32 bytes of its AES-256 key and nothing else, so that
 * destroying the key is one overwrite in place. A key is written to a temporary file, forced and
 * renamed, so a crash never leaves a key file of the wrong size; a key file of 32 zero bytes is a
 * destroyed key (the overwrite reached the disk, the deletion did not).
 */
final class JournalKeyFile {

    /** AES-256. */
    static final int KEY_BYTES = 32;

    /** The suffix of a key being written; one left behind by a crash encrypted nothing. */
    static final String TEMP_SUFFIX = ".tmp";

    private JournalKeyFile() {}

    /**
     * Writes a fresh random key to {@code keyFile} (temporary file, force, rename) and returns it.
     * The directory is not forced: the caller does so once the segment file exists too.
     */
    static byte[] create(Path keyFile, SecureRandom random, PayloadJournal.Fsync fsync)
            throws IOException {
        byte[] key = new byte[KEY_BYTES];
        random.nextBytes(key);
        Path tmp = keyFile.resolveSibling(keyFile.getFileName() + TEMP_SUFFIX);
        boolean done = false;
        try {
            try (FileChannel ch =
                    FileChannel.open(
                            tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                writeFully(ch, key);
                fsync.force(ch, tmp);
            }
            Files.move(tmp, keyFile, StandardCopyOption.ATOMIC_MOVE);
            done = true;
        } catch (IOException e) {
            throw IoErrors.naming(keyFile, "creating key file", e);
        } finally {
            if (!done) {
                Arrays.fill(key, (byte) 0);
            }
        }
        return key;
    }

    /**
     * The key in {@code keyFile}: null when the file holds 32 zero bytes (a destroyed key) or does
     * not exist, which the caller tells apart by listing the folder.
     *
     * @throws CorruptFileException when the file is not exactly {@value #KEY_BYTES} bytes long
     */
    static byte[] read(Path keyFile) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(keyFile);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw IoErrors.naming(keyFile, "reading", e);
        }
        if (bytes.length != KEY_BYTES) {
            Arrays.fill(bytes, (byte) 0);
            throw new CorruptFileException(
                    keyFile,
                    "payload journal key file: expected "
                            + KEY_BYTES
                            + " bytes, found "
                            + bytes.length
                            + " (damaged, or not written by the journal?)");
        }
        for (byte b : bytes) {
            if (b != 0) {
                return bytes;
            }
        }
        return null;
    }

    /**
     * Overwrites the key in place with zeros and forces it: the key's bytes no longer exist on the
     * file system's view of the disk even if the deletion that follows is lost in a crash. The file
     * is not truncated first, which would free the blocks that still hold the key.
     */
    static void zero(Path keyFile, PayloadJournal.Fsync fsync) throws IOException {
        try (FileChannel ch = FileChannel.open(keyFile, StandardOpenOption.WRITE)) {
            writeFully(ch, new byte[KEY_BYTES]);
            fsync.force(ch, keyFile);
        } catch (NoSuchFileException e) {
            // already deleted: nothing of the key is left to overwrite
        } catch (IOException e) {
            throw IoErrors.naming(keyFile, "zeroing key file", e);
        }
    }

    /**
     * Writes {@code bytes} at offset 0 through a direct buffer of our own, zeroed afterwards: a
     * heap buffer would be copied into the JDK's per-thread cache of direct buffers, a copy of the
     * key that nothing here could wipe.
     */
    private static void writeFully(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(bytes.length);
        try {
            buf.put(bytes).flip();
            long position = 0;
            while (buf.hasRemaining()) {
                position += ch.write(buf, position);
            }
        } finally {
            buf.clear();
            buf.put(new byte[bytes.length]);
        }
    }
}
