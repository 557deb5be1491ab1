package dev.nepenthe.cluster.internal;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The group's evidence, one JSON line per event, each naming the SHA-256 of the line before it:
 * replicas joining (their node and store keys) and forgets sealing (their receipts). Every line
 * comes from applying the replicated log in order, so every replica's ledger holds the same lines
 * (from its first entry on); an auditor verifies a receipt against any one of them. A line is
 * appended and forced before the entry that made it counts as applied; an entry applied again after
 * a crash (its log index not above the last line's) appends nothing.
 */
final class ClusterLedger {

    private final Path file;
    private final List<JsonObject> entries = new ArrayList<>();
    private String head = LedgerLines.GENESIS;

    private ClusterLedger(Path file) {
        this.file = file;
    }

    static ClusterLedger open(Path file) throws IOException {
        ClusterLedger l = new ClusterLedger(file);
        l.load();
        return l;
    }

    /** Reads the file again: an installed copy replaced it. */
    synchronized void reload() throws IOException {
        entries.clear();
        head = LedgerLines.GENESIS;
        load();
    }

    private void load() throws IOException {
        LedgerLines read = LedgerLines.read(file);
        if (Files.exists(file) && Files.size(file) > read.wholeBytes()) {
            // A line cut short by a crash while it was appended: its entry never counted as
            // applied, so it is applied again and the line written whole.
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
                c.truncate(read.wholeBytes());
                c.force(true);
            }
        }
        entries.addAll(read.lines());
        head = read.head();
    }

    /** The last line's log index, 0 when empty. */
    synchronized long lastIndex() {
        return entries.isEmpty() ? 0 : entries.getLast().get("index").getAsLong();
    }

    synchronized List<JsonObject> entries() {
        return List.copyOf(entries);
    }

    synchronized String head() {
        return head;
    }

    /**
     * Appends an event made by applying log entry {@code index}; nothing when the ledger already
     * holds a line of that index or a later one (the entry is being applied again).
     */
    synchronized void append(String kind, long index, JsonObject fields) throws IOException {
        if (index <= lastIndex()) {
            return;
        }
        JsonObject o = new JsonObject();
        o.addProperty("prev", head);
        o.addProperty("kind", kind);
        o.addProperty("index", index);
        for (String k : fields.keySet()) {
            o.add(k, fields.get(k));
        }
        String line = o.toString();
        try (FileChannel c =
                FileChannel.open(
                        file,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND)) {
            ByteBuffer b = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                c.write(b);
            }
            c.force(true);
        }
        entries.add(o);
        head = Attestation.sha256(line);
    }

    Path file() {
        return file;
    }
}
