package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.crypto.CounterCipher;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.StorageFault;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;

/**
 * A collection's persisted vector index: one encrypted file per generation, so that an open loads
 * the index instead of rebuilding it, and so that a removal can make every copy of the previous
 * file unreadable at the cost of one key.
 *
 * <p>Why a key per generation. An index file holds the vectors of every subject in one structure,
 * so it cannot be sealed per subject the way segments are. Each generation is encrypted
 * (AES-256-CTR) under a key of its own in the keystore. Whenever records leave the index (a delete,
 * a subject drop, a forget's cleanup) the current generation's key is destroyed before the index
 * changes ({@link #invalidate}), and its file deleted right after on a thread of its own: from then
 * on any copy of that file (a backup of the data folder, a disk block, a file a crash left, the
 * file itself until its deletion ends) is ciphertext without a key. So a generation on disk never
 * holds a vector whose record was removed after it was written; a new one is written at the next
 * clean close or checkpoint ({@link #write}), and until then an open after a crash rebuilds from
 * the records.
 *
 * <p>File {@code index/gen-<generation>-<key id>.idx}, inside the {@link ChecksummedFiles} envelope
 * (whose checksum covers the ciphertext, so damage is found before a key is used): in the clear the
 * generation, the index kind and the counter's start; then, encrypted, 16 zero bytes (a wrong key
 * shows as other bytes), the ordinal and record version of every vector the index holds, and the
 * index as {@link VectorIndex#writeTo} writes it. The key id is in the name so that a stale file's
 * key can be destroyed without reading the file.
 */
public final class IndexGenerations {

    static final String FORMAT = "nepenthe-index-generation";
    static final int VERSION = 1;
    private static final Pattern NAME = Pattern.compile("gen-(\\d{1,18})-([0-9a-f]{32})\\.idx");
    private static final byte[] KEY_CHECK = new byte[16];
    private static final System.Logger LOG = System.getLogger(IndexGenerations.class.getName());

    /** A generation on disk: its number, key id and file. */
    // A key id read from a file name, never compared as a record or changed.
    @SuppressWarnings("ArrayRecordComponent")
    record Generation(long number, byte[] keyId, Path file) {}

    /**
     * A loaded index with the record version of each ordinal it held when written ({@code
     * versions[ordinal]}, -1 where it held none).
     */
    // Handed from the reader to the catch-up once; a copy would double a large array.
    @SuppressWarnings("ArrayRecordComponent")
    public record Loaded(VectorIndex index, long generation, long[] versions) {}

    /** Why an open rebuilt instead of loading, or null if it loaded. */
    public record Outcome(Loaded loaded, String rebuiltBecause) {}

    private final Path dir;
    private final Keystore keystore;
    private final KeyedHash hashes;
    private final String collectionId;
    private final VectorIndexFactory factory;
    private final IndexConfig config;
    private final SecureRandom random = new SecureRandom();

    /** Threads deleting destroyed generations' files (see {@link #destroy}); a few at most. */
    private final List<Thread> deleting = new ArrayList<>();

    /** The generation whose file holds the index as the collection serves it, or null. */
    private Generation current;

    private long lastNumber;
    private boolean retired;

    /**
     * The store's read-only latch: a deletion whose folder fsync fails trips it, as any write does.
     */
    private final StorageFault fault;

    public IndexGenerations(
            Path dir,
            Keystore keystore,
            KeyedHash hashes,
            String collectionId,
            VectorIndexFactory factory,
            IndexConfig config,
            StorageFault fault) {
        this.fault = fault;
        this.dir = dir;
        this.keystore = keystore;
        this.hashes = hashes;
        this.collectionId = collectionId;
        this.factory = factory;
        this.config = config;
    }

    /** Whether this collection's index kind can be persisted at all. */
    public boolean enabled() {
        return factory.persists();
    }

    private KeyedHash.Hash keyName(byte[] keyId) {
        return keyName(hashes, collectionId, HexFormat.of().formatHex(keyId));
    }

    /**
     * The keystore name of a generation's key: a keyed hash, so the keystore does not say whose it
     * is.
     */
    private static KeyedHash.Hash keyName(KeyedHash hashes, String collectionId, String keyIdHex) {
        return hashes.of("index-generation", collectionId, keyIdHex);
    }

    /**
     * Loads the newest generation whose key exists, after destroying the keys of and deleting every
     * older or unreadable one (and any file a crash left half-written). Returns why it could not
     * load instead of throwing: the index is derived from the records, so a file that fails is
     * named in the log and in the open report, and the caller rebuilds.
     */
    public synchronized Outcome open() throws IOException {
        if (!enabled()) {
            return new Outcome(null, "the " + factory.kind() + " index kind is not persisted");
        }
        List<Generation> found = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    Matcher m = NAME.matcher(name);
                    if (m.matches()) {
                        found.add(
                                new Generation(
                                        Long.parseLong(m.group(1)),
                                        HexFormat.of().parseHex(m.group(2)),
                                        f));
                        continue;
                    }
                    // A write a crash cut short: its key exists already (it is made first).
                    Matcher tmp =
                            NAME.matcher(
                                    name.endsWith(".tmp")
                                            ? name.substring(0, name.length() - 4)
                                            : "");
                    if (tmp.matches()) {
                        keystore.destroy(keyName(hashes, collectionId, tmp.group(2)), true);
                    }
                    Files.deleteIfExists(f);
                }
            }
        }
        found.sort((a, b) -> Long.compare(b.number, a.number));
        lastNumber = found.isEmpty() ? 0 : found.get(0).number;
        String why = found.isEmpty() ? "no index file" : null;
        Loaded loaded = null;
        for (Generation g : found) {
            if (loaded == null && why == null) {
                try {
                    loaded = read(g);
                    if (loaded == null) {
                        why =
                                g.file
                                        + " has no key (destroyed when records left the index after"
                                        + " it was written)";
                    } else {
                        current = g;
                        continue;
                    }
                } catch (IOException | RuntimeException e) {
                    why = g.file + " failed: " + e.getMessage();
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "collection {0}: index file unusable, rebuilding the index from"
                                    + " the records: {1}",
                            collectionId,
                            why);
                }
            }
            destroy(g);
        }
        // An open leaves no file it gave up on behind it: the deletions are waited for here.
        awaitDeletions();
        return new Outcome(loaded, loaded == null ? why : null);
    }

    /** Reads one generation; null if its key is gone. */
    private Loaded read(Generation g) throws IOException {
        DataKey key = keystore.find(keyName(g.keyId));
        if (key == null) {
            return null;
        }
        return ChecksummedFiles.read(
                g.file,
                FORMAT,
                VERSION,
                VERSION,
                (in, version) -> {
                    long number = in.readLong();
                    if (number != g.number) {
                        throw new IllegalArgumentException(
                                "generation " + number + " inside a file named for " + g.number);
                    }
                    String kind = in.readUTF();
                    if (!kind.equals(factory.kind())) {
                        throw new IllegalArgumentException(
                                "holds a '"
                                        + kind
                                        + "' index, the collection's kind is '"
                                        + factory.kind()
                                        + "'");
                    }
                    byte[] iv = in.readNBytes(CounterCipher.IV_LENGTH);
                    // Closing the stream wipes its plaintext buffer.
                    try (DataInputStream plain =
                            new DataInputStream(new Decrypting(in, CounterCipher.at(key, iv, 0)))) {
                        byte[] check = plain.readNBytes(KEY_CHECK.length);
                        if (!Arrays.equals(check, KEY_CHECK)) {
                            throw new IllegalArgumentException(
                                    "does not decrypt with its key (the keystore is not the one it"
                                            + " was written with, or the key slot was modified)");
                        }
                        int count = plain.readInt();
                        if (count < 0) {
                            throw new IllegalArgumentException(
                                    "version table of " + count + " entries");
                        }
                        long[] versions = new long[0];
                        // Ordinals are dense in a store (freed ones are reused): one far beyond the
                        // count is
                        // not something a write produces, and refusing it bounds the table.
                        long maxOrdinal = 16L * Math.max(count, 1 << 16);
                        for (int i = 0; i < count; i++) {
                            int ord = plain.readInt();
                            long v = plain.readLong();
                            if (ord < 0 || ord > maxOrdinal || v < 0) {
                                throw new IllegalArgumentException(
                                        "version table entry "
                                                + i
                                                + ": ordinal "
                                                + ord
                                                + " version "
                                                + v);
                            }
                            if (ord >= versions.length) {
                                // Grown as read, never sized from an unverified count.
                                int old = versions.length;
                                versions = Arrays.copyOf(versions, Math.max(ord + 1, old * 2));
                                Arrays.fill(versions, old, versions.length, -1);
                            }
                            versions[ord] = v;
                        }
                        VectorIndex index = factory.readFrom(config, plain);
                        if (plain.read() != -1) {
                            index.close();
                            throw new IllegalArgumentException("bytes left after the index");
                        }
                        return new Loaded(index, number, versions);
                    }
                });
    }

    /**
     * Writes the next generation of {@code index} ({@code ordinals[i]} at record version {@code
     * versions[i]}: what it holds), then destroys the previous generation. Adds and removes must
     * wait meanwhile (the caller holds the collection's writer); searches go on.
     */
    public synchronized void write(VectorIndex index, int[] ordinals, long[] versions)
            throws IOException {
        if (retired) {
            return;
        }
        Files.createDirectories(dir);
        byte[] keyId = new byte[16];
        byte[] iv = new byte[CounterCipher.IV_LENGTH];
        random.nextBytes(keyId);
        random.nextBytes(iv);
        long number = lastNumber + 1;
        Generation next =
                new Generation(
                        number,
                        keyId,
                        dir.resolve(
                                "gen-" + number + "-" + HexFormat.of().formatHex(keyId) + ".idx"));
        // The key is durable before the file that needs it.
        DataKey key = keystore.getOrCreate(keyName(keyId), true);
        try {
            ChecksummedFiles.write(
                    next.file,
                    FORMAT,
                    VERSION,
                    ChecksummedFiles.newFileId(),
                    out -> {
                        out.writeLong(number);
                        out.writeUTF(factory.kind());
                        out.write(iv);
                        Encrypting enc = new Encrypting(out, CounterCipher.at(key, iv, 0));
                        DataOutputStream plain =
                                new DataOutputStream(new BufferedOutputStream(enc, 1 << 16));
                        plain.write(KEY_CHECK);
                        plain.writeInt(ordinals.length);
                        for (int i = 0; i < ordinals.length; i++) {
                            plain.writeInt(ordinals[i]);
                            plain.writeLong(versions[i]);
                        }
                        index.writeTo(plain);
                        plain.flush();
                    });
        } catch (IOException | RuntimeException e) {
            keystore.destroy(keyName(keyId), true);
            throw e;
        }
        lastNumber = number;
        Generation previous = current;
        current = next;
        if (previous != null) {
            destroy(previous);
        }
    }

    /**
     * Makes the current generation unreadable: its key destroyed (and the keystore synced) before
     * this returns, then its file deleted beside the caller. Called before records leave the index.
     * Does nothing when there is none.
     *
     * @return whether a generation was destroyed
     */
    public synchronized boolean invalidate() throws IOException {
        Generation g = current;
        if (g == null) {
            return false;
        }
        current = null;
        destroy(g);
        return true;
    }

    /** The generation serving now, or -1. */
    public synchronized long currentGeneration() {
        return current == null ? -1 : current.number;
    }

    /** The current generation's file, or null (tests read it). */
    public synchronized Path currentFile() {
        return current == null ? null : current.file;
    }

    /**
     * Destroys the generation's key (the keystore synced), then deletes its file beside the caller:
     * once the key is gone the file is ciphertext nothing can read, and deleting it is
     * housekeeping, but not a cheap one (unlinking a 2 GB generation and syncing its folder took
     * about half a second here, which a delete or a forget's cleanup paid under the writer mutex).
     * {@link #awaitDeletions} waits for it; the close and a retirement do; a file a crash leaves
     * behind has no key and the next {@link #open} deletes it.
     */
    private void destroy(Generation g) throws IOException {
        keystore.destroy(keyName(g.keyId), true);
        Path file = g.file;
        synchronized (deleting) {
            deleting.removeIf(t -> !t.isAlive());
            deleting.add(
                    Thread.ofPlatform()
                            .name("nepenthe-index-file-delete")
                            .daemon()
                            .start(
                                    () -> {
                                        // The work is the kernel's (freeing the file's cached pages
                                        // and blocks), done on
                                        // this thread's time: below the forget worker's priority,
                                        // so the forget that
                                        // destroyed the generation goes first.
                                        BackgroundPriority.lowerCurrentThread(19);
                                        try {
                                            shrink(file);
                                            Files.deleteIfExists(file);
                                            ChecksummedFiles.fsyncDirectory(dir);
                                        } catch (IOException | RuntimeException e) {
                                            fault.trip(e);
                                            LOG.log(
                                                    System.Logger.Level.WARNING,
                                                    "could not delete the index generation file"
                                                        + " {0}; its key is destroyed, so it is"
                                                        + " unreadable, and the next open deletes"
                                                        + " it: {1}",
                                                    file,
                                                    e.toString());
                                        }
                                    }));
        }
    }

    /** What {@link #shrink} cuts off a file at a time. */
    private static final long SHRINK_STEP = 64L << 20;

    /**
     * Cuts a destroyed generation's file down from its end, a step at a time, before it is
     * unlinked. Why: unlinking a large file just written in one go keeps the file system busy, and
     * every fsync meanwhile (the checkpoint of the forget that destroyed the generation) waits for
     * it; cut in steps, each step is a short change a waiting fsync gets in between. The
     * measurements are in docs/BENCHMARKS.md ("Where a forget's second went at 1M").
     */
    private static void shrink(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (long size = ch.size(); size > 0; ) {
                size = Math.max(0, size - SHRINK_STEP);
                ch.truncate(size);
            }
        } catch (NoSuchFileException e) {
            // Gone already: nothing to cut.
        } catch (IOException e) {
            // Only a courtesy to other writers: the unlink that follows still runs (and says so
            // if it fails too).
        }
    }

    /** Waits until every file deletion {@link #destroy} started has ended. */
    public void awaitDeletions() {
        List<Thread> running;
        synchronized (deleting) {
            running = List.copyOf(deleting);
            deleting.clear();
        }
        boolean interrupted = false;
        for (Thread t : running) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted =
                            true; // a deletion is short; finish waiting, then pass the interrupt on
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Destroys the key of every generation file in {@code dir} (the name carries its key id) and
     * deletes the files: a dropped collection's folder is removed after this, and a copy of its
     * index files elsewhere stays unreadable.
     */
    public static void destroyFolder(
            Path dir, Keystore keystore, KeyedHash hashes, String collectionId) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (m.matches()) {
                    keystore.destroy(keyName(hashes, collectionId, m.group(2)), true);
                }
                Files.deleteIfExists(f);
            }
        }
    }

    /**
     * Stops this collection's generations for good (it is being dropped): the current one is
     * destroyed and no later {@link #write} happens.
     */
    public synchronized void retire() throws IOException {
        retired = true;
        invalidate();
        // The folder is deleted next: no deletion of ours may still be running in it.
        awaitDeletions();
    }

    /**
     * The decrypted contents of a generation file (a copy, wherever it lies), or null once its key
     * is destroyed: what forensic tests compare before and after a removal.
     */
    public static byte[] decrypt(
            Path file, Keystore keystore, KeyedHash hashes, String collectionId)
            throws IOException {
        Matcher m = NAME.matcher(file.getFileName().toString());
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "not an index generation file name: " + file.getFileName());
        }
        DataKey key = keystore.find(keyName(hashes, collectionId, m.group(2)));
        if (key == null) {
            return null;
        }
        return ChecksummedFiles.read(
                file,
                FORMAT,
                VERSION,
                VERSION,
                (in, version) -> {
                    in.readLong();
                    in.readUTF();
                    byte[] iv = in.readNBytes(CounterCipher.IV_LENGTH);
                    try (Decrypting plain = new Decrypting(in, CounterCipher.at(key, iv, 0))) {
                        return plain.readAllBytes();
                    }
                });
    }

    /** Counter-mode encryption of everything written, into a stream it never closes. */
    private static final class Encrypting extends FilterOutputStream {
        private final Cipher cipher;
        private byte[] buf = new byte[1 << 16];

        Encrypting(OutputStream out, Cipher cipher) {
            super(out);
            this.cipher = cipher;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (buf.length < len) {
                buf = new byte[len];
            }
            CounterCipher.crypt(cipher, b, off, len, buf, 0);
            out.write(buf, 0, len);
        }

        @Override
        public void close() {
            // The envelope owns the stream.
        }
    }

    /**
     * Counter-mode decryption of what is read, buffered: an index reads most of its file an int or
     * a byte at a time (slot states, degrees, labels), and a {@code BufferedInputStream} takes a
     * lock for each of those reads, millions at an open. One thread reads it. Closing it zeros its
     * plaintext buffer and leaves the underlying stream open (the envelope owns it).
     */
    private static final class Decrypting extends InputStream {
        private static final int BUFFER = 1 << 16;
        private final InputStream in;
        private final Cipher cipher;

        /**
         * Where the ciphertext is read before it is decrypted elsewhere: the JCE copies its input
         * to a new array when asked to decrypt in place. It only ever holds ciphertext.
         */
        private final byte[] sealed = new byte[BUFFER];

        /** Decrypted bytes not yet read, in {@code [pos, limit)}. */
        private final byte[] plain = new byte[BUFFER];

        private int pos;
        private int limit;

        Decrypting(InputStream in, Cipher cipher) {
            this.in = in;
            this.cipher = cipher;
        }

        /** Reads and decrypts into {@code out}; the count, or -1 at the end of the stream. */
        private int decryptNext(byte[] out, int off, int len) throws IOException {
            int n = in.read(sealed, 0, Math.min(len, BUFFER));
            if (n > 0) {
                CounterCipher.crypt(cipher, sealed, 0, n, out, off);
            }
            return n;
        }

        private boolean fill() throws IOException {
            int n = decryptNext(plain, 0, BUFFER);
            pos = 0;
            limit = Math.max(n, 0);
            return n > 0;
        }

        @Override
        public int read() throws IOException {
            if (pos == limit && !fill()) {
                return -1;
            }
            return plain[pos++] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (pos == limit) {
                if (len >= BUFFER) {
                    // A large read is decrypted straight into the caller's array.
                    return decryptNext(b, off, len);
                }
                if (!fill()) {
                    return -1;
                }
            }
            int n = Math.min(len, limit - pos);
            System.arraycopy(plain, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public int available() {
            return limit - pos;
        }

        @Override
        public long skip(long n) {
            throw new UnsupportedOperationException("a counter-mode stream is read in order");
        }

        @Override
        public void close() {
            Arrays.fill(plain, (byte) 0);
            pos = 0;
            limit = 0;
        }
    }
}
