package dev.nepenthe.cluster.internal;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
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

    private static final String GENESIS = "0".repeat(64);

    private final Path file;
    private final List<JsonObject> entries = new ArrayList<>();
    private String head = GENESIS;

    private ClusterLedger(Path file) {
        this.file = file;
    }

    static ClusterLedger open(Path file) throws IOException {
        ClusterLedger l = new ClusterLedger(file);
        if (!Files.exists(file)) {
            return l;
        }
        byte[] bytes = Files.readAllBytes(file);
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] != '\n') {
            end--;
        }
        if (end < bytes.length) {
            // A line cut short by a crash while it was appended: its entry never counted as
            // applied, so it is applied again and the line written whole.
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
                c.truncate(end);
                c.force(true);
            }
        }
        String text = new String(bytes, 0, end, StandardCharsets.UTF_8);
        List<String> lines =
                text.isEmpty()
                        ? List.of()
                        : List.of(text.substring(0, text.length() - 1).split("\n", -1));
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            JsonObject o;
            try {
                o = JsonParser.parseString(line).getAsJsonObject();
            } catch (RuntimeException e) {
                throw new IOException(
                        file
                                + ": line "
                                + (i + 1)
                                + ": expected a JSON object, got one that does"
                                + " not parse");
            }
            String prev = o.has("prev") ? o.get("prev").getAsString() : "";
            if (!prev.equals(l.head)) {
                throw new IOException(
                        file
                                + ": line "
                                + (i + 1)
                                + ": expected prev "
                                + l.head
                                + ", got "
                                + prev
                                + " (a line was changed, removed or reordered)");
            }
            l.entries.add(o);
            l.head = Attestation.sha256(line);
        }
        return l;
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
