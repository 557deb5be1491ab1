package dev.nepenthe.core.internal.text;

import dev.nepenthe.core.internal.crypto.CounterCipher;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.store.BufferedIndexInput;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;

/**
 * A Lucene directory whose every file is encrypted (AES-256-CTR) under a key of its own, kept in
 * the store's keystore, apart from the data. Deleting a file destroys its key first, so a segment
 * merged away by a forget is unreadable wherever a copy of it survives (a backup, a snapshot of the
 * disk, a block the file system has not reused yet): the text index gets the crypto-erasure the
 * record files get from per-subject keys, at the granularity Lucene rewrites, the segment.
 *
 * <p>File layout: magic (4), the file's key id (16 random bytes; the keystore holds the key under a
 * keyed hash of the collection and this id, so a renamed file keeps its key), the initial counter
 * (16), then the ciphertext of exactly what Lucene wrote. Lucene's own footer checksum covers the
 * plaintext, so a damaged or wrongly decrypted file fails Lucene's checks.
 *
 * <p>New keys are written to the keystore without an fsync and made durable in {@link #sync},
 * before the files they encrypt are: a crash before that loses only files no commit names.
 */
final class EncryptedDirectory extends FilterDirectory {

    static final int MAGIC = 0x4E505458; // "NPTX"
    static final int HEADER = 4 + 16 + CounterCipher.IV_LENGTH;
    private static final int BUFFER = 8192;

    /**
     * Read buffer: Lucene's reads are mostly small and random (term dictionary blocks, doc values),
     * and each refill is decrypted whole, so a refill stays small (Lucene's own default is 1 KB).
     */
    private static final int BUFFER_READ = 2048;

    private final Keystore keystore;
    private final KeyedHash hashes;
    private final String collectionId;
    private final SecureRandom random = new SecureRandom();

    /**
     * The key id of every file this directory wrote or opened, by name: a file whose header is
     * damaged still has its key destroyed when it is deleted.
     */
    private final Map<String, byte[]> keyIds = new ConcurrentHashMap<>();

    EncryptedDirectory(Directory raw, Keystore keystore, KeyedHash hashes, String collectionId) {
        super(raw);
        this.keystore = keystore;
        this.hashes = hashes;
        this.collectionId = collectionId;
    }

    private KeyedHash.Hash keyName(byte[] keyId) {
        return hashes.of("text-file", collectionId, HexFormat.of().formatHex(keyId));
    }

    @Override
    public IndexOutput createOutput(String name, IOContext context) throws IOException {
        return encrypting(in.createOutput(name, context));
    }

    @Override
    public IndexOutput createTempOutput(String prefix, String suffix, IOContext context)
            throws IOException {
        return encrypting(in.createTempOutput(prefix, suffix, context));
    }

    @Override
    public void rename(String source, String dest) throws IOException {
        in.rename(source, dest);
        byte[] id = keyIds.remove(source);
        if (id != null) {
            keyIds.put(dest, id);
        }
    }

    private IndexOutput encrypting(IndexOutput raw) throws IOException {
        byte[] keyId = new byte[16];
        byte[] iv = new byte[CounterCipher.IV_LENGTH];
        random.nextBytes(keyId);
        random.nextBytes(iv);
        keyIds.put(raw.getName(), keyId.clone());
        try {
            DataKey key = keystore.getOrCreate(keyName(keyId), false);
            raw.writeInt(MAGIC);
            raw.writeBytes(keyId, keyId.length);
            raw.writeBytes(iv, iv.length);
            return new EncryptingOutput(
                    raw, CounterCipher.at(key, iv, 0), folder().resolve(raw.getName()));
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
    }

    @Override
    public IndexInput openInput(String name, IOContext context) throws IOException {
        try {
            return decrypting(name);
        } catch (CorruptIndexException | NoSuchFileException | FileNotFoundException e) {
            throw e; // Lucene tells these apart, and they name the file
        } catch (IOException e) {
            throw IoErrors.naming(folder().resolve(name), "opening", e);
        }
    }

    private IndexInput decrypting(String name) throws IOException {
        Header h;
        long length;
        try (IndexInput raw = in.openInput(name, IOContext.READONCE)) {
            h = readHeader(raw, name);
            keyIds.put(name, h.keyId.clone());
            length = raw.length() - HEADER;
            DataKey key = keystore.find(keyName(h.keyId));
            if (key == null) {
                throw new CorruptIndexException(
                        "its key is not in the keystore (destroyed when the file was deleted,"
                                + " or this keystore is not the one the file was written with)",
                        raw);
            }
            // Reads go straight to the file (positional, shared by clones) and are decrypted in
            // Lucene's own buffer: no second buffer, no copy.
            Path file = folder().resolve(name);
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            return new DecryptingInput(
                    "encrypted(" + file + ")", channel, key, h.iv, 0, length, true);
        }
    }

    /** A file's clear header: the id of its key and its initialisation vector. */
    private static final class Header {
        final byte[] keyId;
        final byte[] iv;

        Header(byte[] keyId, byte[] iv) {
            this.keyId = keyId;
            this.iv = iv;
        }
    }

    private static Header readHeader(IndexInput raw, String name) throws IOException {
        if (raw.length() < HEADER) {
            throw new CorruptIndexException(
                    "text index file "
                            + name
                            + " is "
                            + raw.length()
                            + " bytes, shorter than its "
                            + HEADER
                            + "-byte encryption header",
                    raw);
        }
        int magic = raw.readInt();
        if (magic != MAGIC) {
            throw new CorruptIndexException(
                    "text index file "
                            + name
                            + ": expected the encrypted-file magic "
                            + Integer.toHexString(MAGIC)
                            + ", got "
                            + Integer.toHexString(magic),
                    raw);
        }
        byte[] keyId = new byte[16];
        byte[] iv = new byte[CounterCipher.IV_LENGTH];
        raw.readBytes(keyId, 0, keyId.length);
        raw.readBytes(iv, 0, iv.length);
        return new Header(keyId, iv);
    }

    @Override
    public long fileLength(String name) throws IOException {
        return Math.max(0, in.fileLength(name) - HEADER);
    }

    /**
     * Destroys the file's key (without an fsync; see {@link #sync}), then deletes the file. The key
     * id comes from the header even when its magic is damaged, and from what this directory
     * remembers of the file: a corrupt file never leaves a live key behind for a copy of it.
     */
    @Override
    public void deleteFile(String name) throws IOException {
        byte[] remembered = keyIds.remove(name);
        if (remembered != null) {
            keystore.destroy(keyName(remembered), false);
        }
        try (IndexInput raw = in.openInput(name, IOContext.READONCE)) {
            if (raw.length() >= HEADER) {
                byte[] keyId = new byte[16];
                raw.seek(4); // past the magic, which need not be intact for the key id to be
                raw.readBytes(keyId, 0, keyId.length);
                if (remembered == null || !Arrays.equals(keyId, remembered)) {
                    keystore.destroy(keyName(keyId), false);
                }
            }
        } catch (NoSuchFileException | FileNotFoundException e) {
            // Lucene deletes what it believes exists; let the delegate report it.
        }
        in.deleteFile(name);
    }

    /** Keys written or destroyed since the last sync become durable before the files do. */
    @Override
    public void sync(Collection<String> names) throws IOException {
        keystore.force();
        try {
            in.sync(names);
        } catch (IOException e) {
            throw IoErrors.naming(folder(), "fsync of text index files " + names + " in", e);
        }
    }

    /** The folder of the files. */
    private Path folder() {
        return ((FSDirectory) FilterDirectory.unwrap(in)).getDirectory();
    }

    /**
     * The folder's fsync through the store's own, which throws when it fails: Lucene's ignores a
     * failed directory fsync, and a commit's rename may then not be durable.
     */
    @Override
    public void syncMetaData() throws IOException {
        keystore.force();
        ChecksummedFiles.fsyncDirectory(folder());
    }

    /**
     * Reads a file's plaintext whole (for the verification's byte scan).
     *
     * @return the plaintext, which the caller wipes when done
     */
    byte[] readPlaintext(String name) throws IOException {
        try (IndexInput input = openInput(name, IOContext.READONCE)) {
            long n = input.length();
            if (n > Integer.MAX_VALUE - 16) {
                throw new IOException(
                        "text index file "
                                + name
                                + " is too large to scan whole ("
                                + n
                                + " bytes)");
            }
            byte[] out = new byte[(int) n];
            input.readBytes(out, 0, out.length);
            return out;
        }
    }

    /** Writes through a counter-mode cipher, keeping Lucene's checksum over the plaintext. */
    private static final class EncryptingOutput extends IndexOutput {
        private final IndexOutput raw;
        private final Cipher cipher;
        private final CRC32 crc = new CRC32();
        private final byte[] plain = new byte[BUFFER];
        private final byte[] sealed = new byte[BUFFER];
        private int buffered;
        private long flushed;
        private boolean closed;
        private final Path file;

        EncryptingOutput(IndexOutput raw, Cipher cipher, Path file) {
            super("encrypted(" + raw + ")", raw.getName());
            this.raw = raw;
            this.cipher = cipher;
            this.file = file;
        }

        @Override
        public void writeByte(byte b) throws IOException {
            if (buffered == BUFFER) {
                flushBuffer();
            }
            plain[buffered++] = b;
            crc.update(b);
        }

        @Override
        public void writeBytes(byte[] b, int offset, int length) throws IOException {
            crc.update(b, offset, length);
            while (length > 0) {
                if (buffered == BUFFER) {
                    flushBuffer();
                }
                int n = Math.min(length, BUFFER - buffered);
                System.arraycopy(b, offset, plain, buffered, n);
                buffered += n;
                offset += n;
                length -= n;
            }
        }

        private void flushBuffer() throws IOException {
            if (buffered == 0) {
                return;
            }
            CounterCipher.crypt(cipher, plain, 0, buffered, sealed, 0);
            try {
                raw.writeBytes(sealed, 0, buffered);
            } catch (IOException e) {
                throw IoErrors.naming(file, "writing", e);
            }
            flushed += buffered;
            buffered = 0;
        }

        @Override
        public long getFilePointer() {
            return flushed + buffered;
        }

        @Override
        public long getChecksum() {
            return crc.getValue();
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                flushBuffer();
            } catch (Throwable t) {
                // The flush's failure is the one to report; closing's rides along with it.
                Arrays.fill(plain, (byte) 0);
                try {
                    raw.close();
                } catch (IOException e) {
                    t.addSuppressed(IoErrors.naming(file, "closing", e));
                }
                throw t;
            }
            Arrays.fill(plain, (byte) 0);
            try {
                raw.close();
            } catch (IOException e) {
                throw IoErrors.naming(file, "closing", e);
            }
        }
    }

    /**
     * Reads and decrypts at any offset. Clones and slices share the file channel (positional reads
     * are safe from several threads); each buffer refill decrypts in place with the reading
     * thread's cipher.
     */
    private static final class DecryptingInput extends BufferedIndexInput {
        private final FileChannel channel;
        private final DataKey key;
        private final byte[] iv;
        private final long offset;
        private final long length;
        private boolean owner;

        DecryptingInput(
                String desc,
                FileChannel channel,
                DataKey key,
                byte[] iv,
                long offset,
                long length,
                boolean owner) {
            super(desc, BUFFER_READ);
            this.channel = channel;
            this.key = key;
            this.iv = iv;
            this.offset = offset;
            this.length = length;
            this.owner = owner;
        }

        @Override
        protected void readInternal(ByteBuffer b) throws IOException {
            long pos = getFilePointer();
            int n = b.remaining();
            if (pos + n > length) {
                throw new EOFException(
                        "read past EOF: "
                                + this
                                + " (position "
                                + pos
                                + ", "
                                + n
                                + " bytes, length "
                                + length
                                + ")");
            }
            int start = b.position();
            long at = HEADER + offset + pos;
            while (b.hasRemaining()) {
                int r;
                try {
                    r = channel.read(b, at);
                } catch (IOException e) {
                    throw new IOException("reading " + this + " failed: " + e.getMessage(), e);
                }
                if (r < 0) {
                    throw new EOFException(
                            "read past EOF: "
                                    + this
                                    + " (file ends before position "
                                    + pos
                                    + " + "
                                    + n
                                    + ")");
                }
                at += r;
            }
            Cipher c = CounterCipher.forThisThread(key, iv, offset + pos);
            try {
                if (b.hasArray()) {
                    byte[] a = b.array();
                    int o = b.arrayOffset() + start;
                    c.update(a, o, n, a, o);
                } else {
                    ByteBuffer sealed = b.duplicate().position(start).limit(start + n);
                    byte[] plain = c.update(toArray(sealed));
                    b.position(start).put(plain);
                }
            } catch (ShortBufferException e) {
                throw new IllegalStateException(e);
            }
        }

        private static byte[] toArray(ByteBuffer buf) {
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        }

        @Override
        protected void seekInternal(long pos) throws IOException {
            if (pos > length) {
                throw new EOFException(
                        "seek past EOF: "
                                + this
                                + " (position "
                                + pos
                                + ", length "
                                + length
                                + ")");
            }
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public DecryptingInput clone() {
            DecryptingInput c = (DecryptingInput) super.clone();
            c.owner = false;
            return c;
        }

        @Override
        public IndexInput slice(String desc, long sliceOffset, long sliceLength)
                throws IOException {
            if (sliceOffset < 0 || sliceLength < 0 || sliceOffset + sliceLength > length) {
                throw new IllegalArgumentException(
                        "slice() "
                                + desc
                                + " out of bounds: offset "
                                + sliceOffset
                                + ", length "
                                + sliceLength
                                + ", file length "
                                + length
                                + ": "
                                + this);
            }
            // The slice's description names the file: an error reading it must say which file.
            return new DecryptingInput(
                    getFullSliceDescription(desc),
                    channel,
                    key,
                    iv,
                    offset + sliceOffset,
                    sliceLength,
                    false);
        }

        @Override
        public void close() throws IOException {
            if (owner) {
                channel.close();
            }
        }
    }
}
