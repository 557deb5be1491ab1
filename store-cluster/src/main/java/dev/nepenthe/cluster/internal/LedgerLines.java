package dev.nepenthe.cluster.internal;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster ledger file read as an auditor reads it: every whole line, each checked to name the
 * SHA-256 of the line before it, and a last line still being written (no newline yet) left out.
 * Reading never writes: the replica that owns the file may be running and appending.
 *
 * @param lines the whole lines' JSON objects, in order
 * @param head the SHA-256 of the last whole line (64 zeros when there is none)
 * @param wholeBytes how many bytes the whole lines take; a file longer than this ends in a line cut
 *     short
 */
public record LedgerLines(List<JsonObject> lines, String head, long wholeBytes) {

    static final String GENESIS = "0".repeat(64);

    /**
     * Reads a ledger file; an absent file reads as empty.
     *
     * @param file the ledger file
     * @return its whole lines
     * @throws IOException if the file cannot be read, a line does not parse as a JSON object, or a
     *     line does not name the hash of the one before it (naming the file and the line)
     */
    public static LedgerLines read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return new LedgerLines(List.of(), GENESIS, 0);
        }
        byte[] bytes = Files.readAllBytes(file);
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] != '\n') {
            end--;
        }
        String text = new String(bytes, 0, end, StandardCharsets.UTF_8);
        List<JsonObject> out = new ArrayList<>();
        String head = GENESIS;
        if (!text.isEmpty()) {
            String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                JsonObject o;
                try {
                    o = JsonParser.parseString(lines[i]).getAsJsonObject();
                } catch (RuntimeException e) {
                    throw new IOException(
                            file
                                    + ": line "
                                    + (i + 1)
                                    + ": expected a JSON object, got one that does not parse");
                }
                String prev = o.has("prev") ? o.get("prev").getAsString() : "";
                if (!prev.equals(head)) {
                    throw new IOException(
                            file
                                    + ": line "
                                    + (i + 1)
                                    + ": expected prev "
                                    + head
                                    + ", got "
                                    + prev
                                    + " (a line was changed, removed or reordered)");
                }
                out.add(o);
                head = Attestation.sha256(lines[i]);
            }
        }
        return new LedgerLines(List.copyOf(out), head, end);
    }
}
