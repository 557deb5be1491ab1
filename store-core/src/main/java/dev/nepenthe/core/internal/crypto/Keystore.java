package dev.nepenthe.core.internal.crypto;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.FileTooNewException;
import dev.nepenthe.core.FileTooOldException;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32C;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Per-subject data keys, wrapped by the master key, in one file of fixed-size slots.
 *
 * <p>Why fixed slots: destroying a key must leave no copy of it anywhere in the file, in a journal,
 * or in an old version of the file. So the file is never rewritten or renamed; a key's slot is
 * overwritten in place with zeros and fsynced, and the slot reused later. (What a file system or
 * SSD does with overwritten blocks underneath is beyond any program; the wrapped key is useless
 * without the master key, which never sits with the data.)
 *
 * <p>Layout: a 4 KiB header (magic, format name, version, slot size, CRC32C), then slots of {@value
 * #SLOT} bytes: state (1: live, 0: empty or destroyed), the subject's keyed hash (32), nonce (12),
 * wrapped key with GCM tag (48), zero padding, CRC32C of the slot (4).
 *
 * <p>A slot changes state through its first byte alone, written on its own: a new key is written
 * whole with the byte still 0, then the byte set to 1; a destroyed key has the byte set to 0 first,
 * then the rest zeroed. A write cut short (a full disk, an I/O error) therefore leaves either a
 * live slot that verifies or a slot whose first byte is 0, which holds no key; opening zeroes such
 * a half-written slot (the rest of a torn destruction may still hold part of the wrapped key). A
 * live slot that fails its checksum is corruption and fails loudly.
 *
 * <p>Failure: a slot write or fsync that fails leaves the keystore failed for good (reads go on): a
 * destroyed key whose zeros may not be durable must be destroyed again after a reopen, never
 * declared gone on a retried fsync, and a new key that may not be durable must encrypt nothing. A
 * slot cut short at the end of the file (a full disk or a crash while the file grew) held a key
 * that was never durable, so nothing was acknowledged under it: opening drops it.
 */
public final class Keystore implements Closeable {

    static final String FORMAT = "nepenthe-keystore";
    static final int VERSION = 1;
    static final int MAGIC = 0x4E504B53; // "NPKS"
    static final int HEADER = 4096;
    static final int SLOT = 128;
    private static final byte LIVE = 1;
    private static final int HASH_OFF = 1,
            NONCE_OFF = 33,
            WRAPPED_OFF = 45,
            WRAPPED_LEN = 48,
            CRC_OFF = SLOT - 4;

    private final Path file;
    private final FileChannel ch;
    private final SecretKeySpec wrapKey;

    /** The store's test points: crash points around a slot write. */
    private final TestPoints points;

    /**
     * Unwraps slots, re-initialised for each (under this object's lock): an open finds the keys of
     * every subject, a hundred thousand at a million records, and {@code Cipher.getInstance} walks
     * the provider list each time. Null until the first unwrap.
     */
    private Cipher unwrapper;

    private final SecureRandom random = new SecureRandom();
    private final Map<KeyedHash.Hash, Integer> slotOf = new HashMap<>();
    private final Map<KeyedHash.Hash, DataKey> cache = new HashMap<>();
    private final Deque<Integer> freeSlots = new ArrayDeque<>();
    private int slotCount;

    /** The first slot write or fsync that failed; once set, nothing more is written. */
    private IOException failed;

    private Keystore(Path file, FileChannel ch, MasterKey master, TestPoints points) {
        this.file = file;
        this.ch = ch;
        this.points = points;
        byte[] k = master.derive("key-wrap");
        this.wrapKey = new SecretKeySpec(k, "AES");
        Arrays.fill(k, (byte) 0);
    }

    /** Opens (creating if needed) {@code keys.db} in {@code folder}. */
    public static Keystore open(Path folder, MasterKey master) throws IOException {
        return open(folder, master, CrashPoints.bound());
    }

    /**
     * {@link #open(Path, MasterKey)} reporting the crash points around slot writes to {@code
     * points}, the store's.
     */
    public static Keystore open(Path folder, MasterKey master, TestPoints points)
            throws IOException {
        Files.createDirectories(folder);
        Path file = folder.resolve("keys.db");
        boolean fresh = !Files.exists(file);
        FileChannel ch =
                FileChannel.open(
                        file,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
        Keystore ks = new Keystore(file, ch, master, points);
        try {
            if (fresh || ch.size() == 0) {
                ks.writeHeader();
            } else {
                ks.load();
            }
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        return ks;
    }

    private void writeHeader() throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER);
        h.putInt(MAGIC);
        byte[] name = FORMAT.getBytes(StandardCharsets.UTF_8);
        h.putShort((short) name.length).put(name).putInt(VERSION).putInt(SLOT);
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, h.position());
        h.putInt((int) crc.getValue());
        h.clear();
        writeFully(h, 0);
        ch.force(true);
    }

    private void load() throws IOException {
        if (ch.size() < HEADER) {
            throw new CorruptFileException(
                    file, FORMAT + ": file is " + ch.size() + " bytes, shorter than its header");
        }
        ByteBuffer h = ByteBuffer.allocate(HEADER);
        readFully(h, 0);
        h.flip();
        if (h.getInt() != MAGIC) {
            throw new CorruptFileException(
                    file, FORMAT + ": bad header magic (not a Nepenthe keystore?)");
        }
        byte[] name = new byte[h.getShort() & 0xFFFF];
        if (name.length > 64) {
            throw new CorruptFileException(
                    file, FORMAT + ": header name length " + name.length + " is impossible");
        }
        h.get(name);
        if (!FORMAT.equals(new String(name, StandardCharsets.UTF_8))) {
            throw new CorruptFileException(
                    file, "expected a '" + FORMAT + "' file, got another kind");
        }
        int version = h.getInt();
        int slotSize = h.getInt();
        int end = h.position();
        int storedCrc = h.getInt();
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, end);
        if ((int) crc.getValue() != storedCrc) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": header checksum failed (hardware problem or the file was"
                            + " modified?)");
        }
        if (version < VERSION) {
            throw new FileTooOldException(file, FORMAT, version, VERSION, VERSION);
        }
        if (version > VERSION) {
            throw new FileTooNewException(file, FORMAT, version, VERSION, VERSION);
        }
        long torn = (ch.size() - HEADER) % SLOT;
        if (slotSize == SLOT && torn != 0 && tornSlotHoldsNoKey(ch.size() - torn)) {
            System.getLogger(Keystore.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "{0}: dropped a key slot cut short at the end of the file ({1} bytes; a"
                                    + " full disk or a crash while it grew)",
                            file,
                            torn);
            ch.truncate(ch.size() - torn);
            ch.force(true);
        }
        if (slotSize != SLOT || (ch.size() - HEADER) % SLOT != 0) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": expected slots of "
                            + SLOT
                            + " bytes filling the file, got slot size "
                            + slotSize
                            + " and "
                            + (ch.size() - HEADER)
                            + " bytes of slots (truncated?)");
        }
        slotCount = (int) ((ch.size() - HEADER) / SLOT);
        ByteBuffer s = ByteBuffer.allocate(SLOT);
        byte[] clean = emptySlot();
        int scrubbed = 0;
        for (int i = 0; i < slotCount; i++) {
            s.clear();
            readFully(s, offset(i));
            byte[] b = s.array();
            if (b[0] == LIVE) {
                CRC32C c = new CRC32C();
                c.update(b, 0, CRC_OFF);
                if ((int) c.getValue() != ByteBuffer.wrap(b, CRC_OFF, 4).getInt()) {
                    throw new CorruptFileException(
                            file,
                            FORMAT
                                    + ": slot "
                                    + i
                                    + " checksum failed"
                                    + " (hardware problem or the file was modified?)");
                }
                slotOf.put(
                        new KeyedHash.Hash(
                                Arrays.copyOfRange(b, HASH_OFF, HASH_OFF + KeyedHash.LENGTH)),
                        i);
            } else if (b[0] == 0) {
                if (!Arrays.equals(b, clean)) {
                    // A key write or destruction cut short: no key, but perhaps part of one.
                    writeFully(ByteBuffer.wrap(clean), offset(i));
                    scrubbed++;
                }
                freeSlots.add(i);
            } else {
                throw new CorruptFileException(
                        file,
                        FORMAT
                                + ": slot "
                                + i
                                + " has state "
                                + b[0]
                                + ", expected 0 (empty) or 1 (live) (hardware problem or the file"
                                + " was modified?)");
            }
        }
        if (scrubbed > 0) {
            ch.force(true);
            System.getLogger(Keystore.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "{0}: zeroed {1} key slot(s)"
                                    + " left half-written by a write that failed or a crash",
                            file,
                            scrubbed);
        }
    }

    /**
     * Whether the partial slot at the end of the file, from {@code at}, was being written when a
     * write failed: a slot is written with its state byte 0 and made live last, so a partial slot
     * whose state byte is live was cut short afterwards (a truncated file), which is corruption.
     */
    private boolean tornSlotHoldsNoKey(long at) throws IOException {
        ByteBuffer state = ByteBuffer.allocate(1);
        readFully(state, at);
        return state.get(0) == 0;
    }

    /** An empty slot as written: zeros, and the checksum of the zeros. */
    private static byte[] emptySlot() {
        byte[] b = new byte[SLOT];
        CRC32C c = new CRC32C();
        c.update(b, 0, CRC_OFF);
        ByteBuffer.wrap(b, CRC_OFF, 4).putInt((int) c.getValue());
        return b;
    }

    /** The subject's data key, or null if it has none (never created, or destroyed). */
    public synchronized DataKey find(KeyedHash.Hash subject) throws IOException {
        DataKey k = cache.get(subject);
        if (k != null) {
            return k;
        }
        Integer slot = slotOf.get(subject);
        if (slot == null) {
            return null;
        }
        ByteBuffer s = ByteBuffer.allocate(SLOT);
        readFully(s, offset(slot));
        byte[] b = s.array();
        try {
            if (unwrapper == null) {
                unwrapper = Cipher.getInstance("AES/GCM/NoPadding");
            }
            Cipher c = unwrapper;
            c.init(Cipher.DECRYPT_MODE, wrapKey, new GCMParameterSpec(128, b, NONCE_OFF, 12));
            c.updateAAD(subject.bytes());
            byte[] raw = c.doFinal(b, WRAPPED_OFF, WRAPPED_LEN);
            k = new DataKey(raw);
            Arrays.fill(raw, (byte) 0);
        } catch (GeneralSecurityException e) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": slot "
                            + slot
                            + " does not unwrap with this master key"
                            + " (wrong master key, or the slot was modified)",
                    e);
        }
        cache.put(subject, k);
        return k;
    }

    /** The subject's data key, created (and fsynced to the keystore) if it has none. */
    public synchronized DataKey getOrCreate(KeyedHash.Hash subject) throws IOException {
        return getOrCreate(subject, true);
    }

    /**
     * The key named by this hash, created if it has none; with {@code sync} false the new slot is
     * written but not fsynced, for keys of files that only need to survive a crash once the files
     * themselves are synced (the caller then calls {@link #force()} before that).
     */
    public synchronized DataKey getOrCreate(KeyedHash.Hash subject, boolean sync)
            throws IOException {
        DataKey k = find(subject);
        if (k != null) {
            return k;
        }
        byte[] raw = new byte[DataKey.LENGTH];
        random.nextBytes(raw);
        byte[] nonce = new byte[12];
        random.nextBytes(nonce);
        byte[] slotBytes = new byte[SLOT];
        slotBytes[0] = LIVE;
        System.arraycopy(subject.bytes(), 0, slotBytes, HASH_OFF, KeyedHash.LENGTH);
        System.arraycopy(nonce, 0, slotBytes, NONCE_OFF, 12);
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, wrapKey, new GCMParameterSpec(128, nonce));
            c.updateAAD(subject.bytes());
            c.doFinal(raw, 0, raw.length, slotBytes, WRAPPED_OFF);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM key wrapping failed", e);
        }
        int slot = freeSlots.isEmpty() ? slotCount++ : freeSlots.poll();
        writeSlot(slot, slotBytes, sync);
        slotOf.put(subject, slot);
        k = new DataKey(raw);
        Arrays.fill(raw, (byte) 0);
        cache.put(subject, k);
        return k;
    }

    /**
     * Destroys the subject's key: its slot is overwritten with zeros in place and fsynced before
     * this returns, and the in-memory copy wiped. Every byte ever encrypted under it, in any file
     * or backup, is unreadable from then on.
     *
     * @return false if the subject had no key
     */
    public synchronized boolean destroy(KeyedHash.Hash subject) throws IOException {
        return destroy(subject, true);
    }

    /**
     * {@link #destroy(KeyedHash.Hash)}, with the fsync left to a later {@link #force()} when {@code
     * sync} is false: for many keys destroyed together, made durable by one fsync.
     */
    public synchronized boolean destroy(KeyedHash.Hash subject, boolean sync) throws IOException {
        Integer slot = slotOf.remove(subject);
        DataKey cached = cache.remove(subject);
        if (cached != null) {
            cached.wipe();
        }
        if (slot == null) {
            return false;
        }
        writeSlot(slot, emptySlot(), sync);
        freeSlots.add(slot);
        return true;
    }

    /** Number of live keys. */
    public synchronized int size() {
        return slotOf.size();
    }

    public Path file() {
        return file;
    }

    /**
     * The file's bytes as they stand between two slot writes (read under this keystore's lock,
     * which every slot write holds): a copy no half-written slot can reach, for a replica copy
     * taken while searches run (a search releasing a text index reader may destroy a key). The
     * caller wipes the array once sent.
     *
     * @throws IOException if the file cannot be read, or is too large for one array
     */
    public synchronized byte[] consistentImage() throws IOException {
        long size = ch.size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IOException(
                    file + ": expected a keystore under 2 GiB to copy, got " + size + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        readFully(b, 0);
        return b.array();
    }

    /** Makes every slot written without a sync durable. */
    public synchronized void force() throws IOException {
        ensureUsable();
        try {
            ch.force(true);
        } catch (IOException | RuntimeException e) {
            throw fail(e);
        }
    }

    /**
     * Writes a slot so that a write cut short leaves no live slot that fails to verify: the state
     * byte is cleared first (a destruction) or set last (a new key), each on its own.
     */
    private void writeSlot(int slot, byte[] slotBytes, boolean sync) throws IOException {
        ensureUsable();
        points.reached("keystore.before-slot-write");
        CRC32C c = new CRC32C();
        c.update(slotBytes, 0, CRC_OFF);
        ByteBuffer.wrap(slotBytes, CRC_OFF, 4).putInt((int) c.getValue());
        byte state = slotBytes[0];
        try {
            writeFully(ByteBuffer.wrap(new byte[] {0}), offset(slot));
            slotBytes[0] = 0;
            writeFully(ByteBuffer.wrap(slotBytes), offset(slot));
            slotBytes[0] = state;
            if (state != 0) {
                writeFully(ByteBuffer.wrap(new byte[] {state}), offset(slot));
            }
            if (sync) {
                ch.force(true);
            }
        } catch (IOException | RuntimeException e) {
            throw fail(e);
        }
        points.reached("keystore.slot-written");
    }

    private void ensureUsable() throws IOException {
        if (failed != null) {
            throw new IOException(
                    "keystore "
                            + file
                            + " failed earlier ("
                            + failed.getMessage()
                            + "); it takes no more key changes until the store is reopened",
                    failed);
        }
    }

    private IOException fail(Throwable e) {
        IOException io =
                e instanceof IOException x
                        ? IoErrors.naming(file, "writing the keystore", x)
                        : new IOException("keystore " + file + ": " + e, e);
        if (failed == null) {
            failed = io;
        }
        return io;
    }

    private static long offset(int slot) {
        return HEADER + (long) slot * SLOT;
    }

    private void writeFully(ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }

    private void readFully(ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            int n;
            try {
                n = ch.read(b, pos);
            } catch (IOException e) {
                throw IoErrors.naming(file, "reading the keystore", e);
            }
            if (n < 0) {
                throw new CorruptFileException(
                        file, FORMAT + ": unexpected end of file at offset " + pos);
            }
            pos += n;
        }
    }

    @Override
    public synchronized void close() throws IOException {
        for (DataKey k : cache.values()) {
            k.wipe();
        }
        cache.clear();
        ch.close();
    }
}
