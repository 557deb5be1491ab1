package dev.nepenthe.core.internal.evidence;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * An append-only, hash-chained, signed record of what the store did to honour erasure requests.
 * Each entry holds its sequence number, time, the hash of the previous entry and a canonical-JSON
 * body; its hash covers all of those, and an Ed25519 signature covers the hash. Bodies hold no
 * content: operation ids, keyed hashes of scopes, counts, states, times.
 *
 * <p>Anyone with the ledger file and the store's public key can verify it offline ({@link
 * #verify(Path, PublicKey)}, or {@code LedgerVerifier} on the command line); changing, removing or
 * reordering any entry breaks the chain at that entry.
 *
 * <p>File: a header (magic, format name, version), then entries framed as {@code
 * [length][crc32c][seq][time][prev hash][body length][body][signature length][signature]}.
 */
public final class EvidenceLedger implements Closeable {

    static final String FORMAT = "nepenthe-evidence-ledger";
    static final int VERSION = 1;
    static final int MAGIC = 0x4E50454C; // "NPEL"
    static final byte[] GENESIS = new byte[32];
    private static final System.Logger LOG = System.getLogger(EvidenceLedger.class.getName());

    private final Path file;
    private final SigningKey key;
    private final FileChannel channel;
    private final List<LedgerEntry> entries;

    /** The verification at open; a ledger that failed it is read, never appended to. */
    private final LedgerVerification opened;

    private final String damage;

    /** The append that failed (a write or its fsync); once set, nothing more is appended. */
    private IOException failed;

    private EvidenceLedger(
            Path file,
            SigningKey key,
            FileChannel channel,
            List<LedgerEntry> entries,
            LedgerVerification opened) {
        this.file = file;
        this.key = key;
        this.channel = channel;
        this.entries = entries;
        this.opened = opened;
        this.damage =
                opened.ok()
                        ? null
                        : "evidence ledger fails verification at entry "
                                + opened.firstBadEntry()
                                + ": "
                                + opened.problem();
    }

    /**
     * Opens (creating if needed) the ledger and verifies all of it against the signing key.
     *
     * @throws CorruptFileException if any entry fails verification (naming the entry)
     */
    public static EvidenceLedger open(Path file, SigningKey key) throws IOException {
        EvidenceLedger l = openAllowingDamage(file, key);
        if (l.damage != null) {
            l.close();
            throw new CorruptFileException(file, l.damage);
        }
        return l;
    }

    /**
     * Opens the ledger like {@link #open}, but a file that fails verification is opened anyway,
     * read-only: {@link #entries()} holds the entries before the first bad one, {@link #damage()}
     * says what is wrong, and {@link #append} refuses. The store uses this so that a damaged ledger
     * stops new forgets, not searches.
     */
    public static EvidenceLedger openAllowingDamage(Path file, SigningKey key) throws IOException {
        if (!Files.exists(file)) {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (FileChannel ch =
                    FileChannel.open(
                            file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer h = header();
                while (h.hasRemaining()) {
                    ch.write(h);
                }
                ch.force(true);
            }
        }
        List<LedgerEntry> entries = new ArrayList<>();
        LedgerVerification v = scan(file, key.publicKey(), entries, true);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE);
        ch.position(ch.size());
        return new EvidenceLedger(file, key, ch, entries, v);
    }

    /**
     * An audit over the entries as read at open and appended since (no re-read of the file; {@link
     * LedgerAudit#read} re-reads it).
     */
    public synchronized LedgerAudit audit() {
        LedgerVerification v =
                damage != null
                        ? opened
                        : new LedgerVerification(entries.size(), -1, null, head().hash());
        return AuditAccess.over(file, key.publicKey(), entries, v);
    }

    /** Why the file failed verification when it was opened, or null when it verified. */
    public String damage() {
        return damage;
    }

    /** The last entry's sequence number and hash (seq -1 and the genesis hash when empty). */
    public synchronized LedgerHead head() {
        return entries.isEmpty()
                ? new LedgerHead(-1, HexFormat.of().formatHex(GENESIS))
                : new LedgerHead(entries.size() - 1, entries.get(entries.size() - 1).hashHex());
    }

    static ByteBuffer header() {
        byte[] name = FORMAT.getBytes(StandardCharsets.UTF_8);
        ByteBuffer h = ByteBuffer.allocate(4 + 2 + name.length + 4);
        h.putInt(MAGIC).putShort((short) name.length).put(name).putInt(VERSION);
        return h.flip();
    }

    /**
     * Appends an entry whose body is the canonical JSON of {@code body}, fsynced before this
     * returns.
     */
    public synchronized LedgerEntry append(Map<String, Object> body) throws IOException {
        if (damage != null) {
            throw new IllegalStateException(
                    file + ": nothing is appended to a damaged evidence ledger (" + damage + ")");
        }
        if (failed != null) {
            // After a failed write the tail may be torn, after a failed fsync the entry may be
            // lost: an entry appended now could follow garbage, or rest on one that is gone.
            throw new IOException(
                    file
                            + ": an earlier append failed ("
                            + failed.getMessage()
                            + "); nothing more is appended until the store is reopened",
                    failed);
        }
        long seq = entries.size();
        long time = System.currentTimeMillis();
        byte[] prev = entries.isEmpty() ? GENESIS : entries.get(entries.size() - 1).hash();
        String json = CanonicalJson.encode(body);
        byte[] hash = hash(seq, time, prev, json);
        byte[] sig = key.sign(hash);
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(payload)) {
            out.writeLong(seq);
            out.writeLong(time);
            out.write(prev);
            byte[] b = json.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
            out.writeInt(sig.length);
            out.write(sig);
        }
        byte[] p = payload.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(p);
        ByteBuffer framed =
                ByteBuffer.allocate(8 + p.length)
                        .putInt(p.length)
                        .putInt((int) crc.getValue())
                        .put(p)
                        .flip();
        try {
            while (framed.hasRemaining()) {
                channel.write(framed);
            }
            channel.force(false);
        } catch (IOException | RuntimeException ex) {
            failed =
                    ex instanceof IOException io
                            ? IoErrors.naming(file, "appending to", io)
                            : new IOException(file + ": appending failed: " + ex, ex);
            throw failed;
        }
        LedgerEntry e = new LedgerEntry(seq, time, prev, json, hash, sig);
        entries.add(e);
        return e;
    }

    public synchronized List<LedgerEntry> entries() {
        return List.copyOf(entries);
    }

    public Path file() {
        return file;
    }

    /** Verifies a ledger file with only its public key (offline, read-only). */
    public static LedgerVerification verify(Path file, PublicKey publicKey) throws IOException {
        return scan(file, publicKey, new ArrayList<>(), false);
    }

    /**
     * Like {@link #verify(Path, PublicKey)}, collecting the entries that verify into {@code out}.
     */
    public static LedgerVerification scanInto(Path file, PublicKey publicKey, List<LedgerEntry> out)
            throws IOException {
        return scan(file, publicKey, out, false);
    }

    static byte[] hash(long seq, long time, byte[] prev, String body) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(ByteBuffer.allocate(16).putLong(seq).putLong(time).array());
            d.update(prev);
            d.update(body.getBytes(StandardCharsets.UTF_8));
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Reads entries, checking frame checksums, sequence, chain and signatures. With {@code
     * repairTornTail}, an entry cut short at the very end (a crash mid-append) is dropped and the
     * file truncated; otherwise it is reported as a problem.
     */
    private static LedgerVerification scan(
            Path file, PublicKey pub, List<LedgerEntry> out, boolean repairTornTail)
            throws IOException {
        byte[] bytes = IoErrors.readAllBytes(file);
        ByteBuffer h = header();
        if (bytes.length < h.remaining() || !ByteBuffer.wrap(bytes, 0, h.remaining()).equals(h)) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": header is missing or wrong (not a Nepenthe evidence"
                            + " ledger, or a version this build does not read)");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        int pos = h.remaining();
        byte[] prev = GENESIS;
        int index = 0;
        while (pos < bytes.length) {
            int remaining = bytes.length - pos;
            int len = remaining >= 8 ? in.getInt(pos) : -1;
            if (remaining < 8 || len < 0 || len > remaining - 8) {
                if (repairTornTail) {
                    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                        ch.truncate(pos);
                        ch.force(true);
                    }
                    LOG.log(
                            Level.WARNING,
                            "{0}: dropped a torn tail of {1} bytes (a crash during an append)",
                            file,
                            remaining);
                    break;
                }
                return bad(out, index, "entry is cut short (file truncated?)");
            }
            CRC32C crc = new CRC32C();
            crc.update(bytes, pos + 8, len);
            if ((int) crc.getValue() != in.getInt(pos + 4)) {
                return bad(out, index, "frame checksum failed (bytes changed)");
            }
            ByteBuffer e = ByteBuffer.wrap(bytes, pos + 8, len);
            try {
                long seq = e.getLong();
                long time = e.getLong();
                byte[] p = new byte[32];
                e.get(p);
                // Lengths inside a frame are checked against the frame before anything is
                // allocated: a crafted length cannot make the verifier allocate gigabytes.
                byte[] body = new byte[boundedLength(e, "body")];
                e.get(body);
                byte[] sig = new byte[boundedLength(e, "signature")];
                e.get(sig);
                String json = new String(body, StandardCharsets.UTF_8);
                if (seq != index) {
                    return bad(
                            out,
                            index,
                            "sequence number "
                                    + seq
                                    + " where "
                                    + index
                                    + " was expected (entries removed or reordered?)");
                }
                if (!Arrays.equals(p, prev)) {
                    return bad(
                            out,
                            index,
                            "previous-hash link does not match the entry before it (chain broken)");
                }
                byte[] hash = hash(seq, time, p, json);
                if (!SigningKey.verify(pub, hash, sig)) {
                    return bad(out, index, "signature does not verify with the given public key");
                }
                out.add(new LedgerEntry(seq, time, p, json, hash, sig));
                prev = hash;
            } catch (RuntimeException ex) {
                return bad(out, index, "entry does not parse: " + ex.getMessage());
            }
            pos += 8 + len;
            index++;
        }
        return new LedgerVerification(out.size(), -1, null, HexFormat.of().formatHex(prev));
    }

    /** A length field, which must fit in what is left of its frame. */
    private static int boundedLength(ByteBuffer frame, String what) {
        int n = frame.getInt();
        if (n < 0 || n > frame.remaining()) {
            throw new IllegalArgumentException(
                    what
                            + " length "
                            + n
                            + " where the frame has "
                            + frame.remaining()
                            + " bytes left");
        }
        return n;
    }

    private static LedgerVerification bad(List<LedgerEntry> good, int index, String problem) {
        String head =
                good.isEmpty()
                        ? HexFormat.of().formatHex(GENESIS)
                        : good.get(good.size() - 1).hashHex();
        return new LedgerVerification(good.size(), index, problem, head);
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
