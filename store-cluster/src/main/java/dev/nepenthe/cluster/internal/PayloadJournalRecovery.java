package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@link PayloadJournal#open} does before the journal takes an append: reads the directory,
 * finishes what a crash cut short, and indexes every record. A crash can leave exactly these, and
 * each is repaired:
 *
 * <ul>
 *   <li>a key file of 32 zero bytes, with or without its segment: a destroy that overwrote the key
 *       and did not finish deleting; the leftovers are deleted (the segment is ciphertext without
 *       key);
 *   <li>the oldest segment without its key file: a destroy that deleted the key and not the
 *       segment; the segment is deleted (destroys go oldest first, so no live segment precedes it);
 *   <li>the newest key without its segment, or a {@code .key.tmp}: a crash while a segment was
 *       being created, before anything was encrypted under the key; the key is zeroed and deleted;
 *   <li>a torn tail of the newest segment (a record cut short or failing its checksum at the end of
 *       the file): cut off; a segment left empty is removed.
 * </ul>
 *
 * Anything else (a checksum failure with valid data after it or in an older segment, a key file of
 * the wrong size, a segment without its key that is not the oldest, indexes out of order, a file
 * the journal does not write) throws a {@link CorruptFileException} naming the file and what was
 * expected against what was found.
 */
final class PayloadJournalRecovery {

    private static final System.Logger LOG =
            System.getLogger(PayloadJournalRecovery.class.getName());

    private static final Pattern NAME =
            Pattern.compile(
                    Pattern.quote(JournalSegment.PREFIX)
                            + "([0-9]{20})("
                            + Pattern.quote(JournalSegment.DATA_SUFFIX)
                            + "|"
                            + Pattern.quote(JournalSegment.KEY_SUFFIX)
                            + "|"
                            + Pattern.quote(JournalSegment.KEY_SUFFIX + JournalKeyFile.TEMP_SUFFIX)
                            + ")");

    private final Path dir;
    private final PayloadJournal.Fsync fsync;

    /** Whether a file was deleted or cut, so the directory must be forced. */
    private boolean changed;

    private PayloadJournalRecovery(Path dir, PayloadJournal.Fsync fsync) {
        this.dir = dir;
        this.fsync = fsync;
    }

    /** The live segments of {@code dir} in index order, their keys loaded, all closed. */
    static List<JournalSegment> recover(Path dir, PayloadJournal.Fsync fsync) throws IOException {
        List<JournalSegment> live = new ArrayList<>();
        try {
            new PayloadJournalRecovery(dir, fsync).run(live);
            return live;
        } catch (IOException | RuntimeException e) {
            // the journal will not open: no key it loaded may outlive the attempt
            for (JournalSegment seg : live) {
                seg.zeroKey();
            }
            throw e;
        }
    }

    private void run(List<JournalSegment> live) throws IOException {
        // first index -> {has segment file, has key file}
        TreeMap<Long, boolean[]> names = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (!m.matches() || !Files.isRegularFile(f)) {
                    throw new CorruptFileException(
                            f,
                            "payload journal: expected only files named seg-<20 digits>.jnl or"
                                    + " .key in the journal's folder, found this one (a stray"
                                    + " file, or the wrong folder?)");
                }
                String suffix = m.group(2);
                if (suffix.endsWith(JournalKeyFile.TEMP_SUFFIX)) {
                    JournalKeyFile.zero(f, fsync);
                    Files.delete(f);
                    changed = true;
                    continue;
                }
                boolean[] has =
                        names.computeIfAbsent(Long.parseLong(m.group(1)), k -> new boolean[2]);
                has[suffix.equals(JournalSegment.DATA_SUFFIX) ? 0 : 1] = true;
            }
        }
        long newest = names.isEmpty() ? -1 : names.lastKey();
        for (var e : names.entrySet()) {
            JournalSegment seg = new JournalSegment(dir, e.getKey());
            boolean hasData = e.getValue()[0];
            boolean hasKey = e.getValue()[1];
            byte[] key = hasKey ? JournalKeyFile.read(seg.keyFile()) : null;
            if (hasKey && key == null) {
                removeDestroyed(seg, "its key file holds zeros (a destroy cut short)");
            } else if (!hasKey) {
                if (!live.isEmpty()) {
                    throw new CorruptFileException(
                            seg.file(),
                            "payload journal: expected the key file "
                                    + seg.keyFile().getFileName()
                                    + " (32 bytes), found none; only the oldest segment may lack"
                                    + " its key, after a destroy cut short, and "
                                    + live.getLast().file().getFileName()
                                    + " precedes this one with its key");
                }
                removeDestroyed(seg, "it has no key file (a destroy cut short)");
            } else if (!hasData) {
                if (seg.first() != newest) {
                    Arrays.fill(key, (byte) 0);
                    throw new CorruptFileException(
                            seg.keyFile(),
                            "payload journal: expected the segment file "
                                    + seg.file().getFileName()
                                    + " beside this key, found none; only the newest key may"
                                    + " lack its segment, after a crash while creating it");
                }
                Arrays.fill(key, (byte) 0);
                JournalKeyFile.zero(seg.keyFile(), fsync);
                Files.delete(seg.keyFile());
                changed = true;
            } else {
                seg.setKey(key);
                try {
                    scan(seg, seg.first() == newest, live.isEmpty() ? null : live.getLast());
                } catch (IOException | RuntimeException ex) {
                    seg.zeroKey();
                    throw ex;
                }
                if (seg.count() == 0) {
                    seg.zeroKey();
                    removeDestroyed(seg, "a crash left it without a whole record");
                } else {
                    live.add(seg);
                }
            }
        }
        if (changed) {
            ChecksummedFiles.fsyncDirectory(dir);
        }
    }

    /** Zeroes the key file if any, deletes the segment, then the key file. */
    private void removeDestroyed(JournalSegment seg, String why) throws IOException {
        boolean had = Files.exists(seg.file());
        seg.deleteFiles(fsync);
        changed = true;
        if (had) {
            LOG.log(Level.INFO, "{0}: removed, {1}", seg.file(), why);
        }
    }

    /** Whether {@code header} and every byte left in {@code in} are zero. */
    private static boolean zerosToTheEnd(byte[] header, DataInputStream in) throws IOException {
        for (byte b : header) {
            if (b != 0) {
                return false;
            }
        }
        byte[] chunk = new byte[8192];
        for (int n; (n = in.read(chunk)) > 0; ) {
            for (int i = 0; i < n; i++) {
                if (chunk[i] != 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Indexes every record of {@code seg}; at the end of the newest segment ({@code newest}) a
     * record cut short, or failing its checksum where the file ends, is a torn tail and is cut off.
     */
    private void scan(JournalSegment seg, boolean newest, JournalSegment previous)
            throws IOException {
        Path file = seg.file();
        long size;
        long pos = 0;
        String damage = null;
        boolean endsTheFile = false;
        try (DataInputStream in =
                new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            size = Files.size(file);
            byte[] header = new byte[JournalSegmentRecords.HEADER_BYTES];
            ByteBuffer h = ByteBuffer.wrap(header);
            long prev = previous == null ? Long.MIN_VALUE : previous.last();
            while (pos < size) {
                long remaining = size - pos;
                if (remaining < JournalSegmentRecords.OVERHEAD) {
                    damage = "expected a whole record, found only " + remaining + " bytes";
                    endsTheFile = true;
                    break;
                }
                in.readFully(header);
                long index = h.getLong(0);
                int ctLength = h.getInt(JournalSegmentRecords.INDEX_BYTES);
                long rest = remaining - JournalSegmentRecords.HEADER_BYTES;
                if (ctLength < JournalSegmentRecords.TAG_BYTES
                        || ctLength > rest - JournalSegmentRecords.CRC_BYTES) {
                    damage =
                            "length field says "
                                    + ctLength
                                    + " bytes of ciphertext, expected "
                                    + JournalSegmentRecords.TAG_BYTES
                                    + " to "
                                    + (rest - JournalSegmentRecords.CRC_BYTES)
                                    + " (the bytes left in the file)";
                    // Past the end of the file: cut short. Too small: a valid record cannot
                    // follow, and zeros to the end are a file extended before its data landed.
                    endsTheFile =
                            ctLength > rest - JournalSegmentRecords.CRC_BYTES
                                    || zerosToTheEnd(header, in);
                    break;
                }
                byte[] record =
                        new byte
                                [JournalSegmentRecords.HEADER_BYTES
                                        + ctLength
                                        + JournalSegmentRecords.CRC_BYTES];
                System.arraycopy(header, 0, record, 0, header.length);
                in.readFully(record, header.length, record.length - header.length);
                damage = JournalSegmentRecords.damage(record, index);
                if (damage != null) {
                    endsTheFile = pos + record.length == size;
                    break;
                }
                if (seg.count() == 0 && index != seg.first()) {
                    throw new CorruptFileException(
                            file,
                            "payload journal: expected the first record to carry index "
                                    + seg.first()
                                    + " (the file's name), found "
                                    + index);
                }
                if (index <= prev) {
                    throw new CorruptFileException(
                            file,
                            "payload journal: record at offset "
                                    + pos
                                    + " carries index "
                                    + index
                                    + ", expected an index greater than "
                                    + prev
                                    + ", the index before it");
                }
                seg.add(index, record.length);
                prev = index;
                pos += record.length;
            }
        } catch (IOException e) {
            if (e instanceof CorruptFileException) {
                throw e;
            }
            throw IoErrors.naming(file, "reading", e);
        }
        if (damage == null) {
            return;
        }
        if (newest && endsTheFile) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(pos);
                fsync.force(ch, file);
            } catch (IOException e) {
                throw IoErrors.naming(file, "cutting a torn tail from", e);
            }
            changed = true;
            LOG.log(
                    Level.WARNING,
                    "{0}: cut a torn tail of {1} bytes at offset {2} (a crash during an append):"
                            + " {3}",
                    file,
                    size - pos,
                    pos,
                    damage);
            return;
        }
        throw new CorruptFileException(
                file,
                "payload journal: record at offset "
                        + pos
                        + " does not verify: "
                        + damage
                        + (newest
                                ? ", and more data follows it"
                                : ", in a segment that was closed and forced")
                        + " (hardware problem or the file was modified?)");
    }
}
