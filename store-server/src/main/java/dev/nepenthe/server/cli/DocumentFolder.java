package dev.nepenthe.server.cli;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.SourceRef;
import dev.nepenthe.grpc.v1.Value;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What {@code nepenthe ingest --folder} reads from a folder and sends for it: which files are
 * documents, the name each is stored under, its text (strict UTF-8), and a chunk as a record on the
 * wire. Apart from {@link IngestCommand} so the command keeps only the flow, and so the rules a
 * user sees in the help (which files, in what order, under which source id) live in one place.
 */
final class DocumentFolder {

    private DocumentFolder() {}

    /**
     * The *.txt and *.md files under a folder, hidden ones and those in hidden folders skipped, by
     * path.
     *
     * @param folder the folder
     * @return the files, in the order of their {@link #relativeName}
     * @throws IOException if the folder cannot be walked
     */
    static List<Path> documents(Path folder) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.filter(Files::isRegularFile)
                    .filter(
                            p -> {
                                String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
                                return name.endsWith(".txt") || name.endsWith(".md");
                            })
                    .filter(
                            p -> {
                                for (Path part : folder.relativize(p)) {
                                    if (part.toString().startsWith(".")) {
                                        return false;
                                    }
                                }
                                return true;
                            })
                    .forEach(out::add);
        }
        // Sorted by the relative name as it is stored, so the order is the same on every system.
        out.sort(Comparator.comparing(p -> relativeName(folder, p)));
        return out;
    }

    /**
     * The path under the folder with '/' between names: the chunks' source id.
     *
     * @param folder the folder
     * @param file a file under it
     * @return the name
     */
    static String relativeName(Path folder, Path file) {
        List<String> parts = new ArrayList<>();
        folder.relativize(file).forEach(p -> parts.add(p.toString()));
        return String.join("/", parts);
    }

    /**
     * A file's text, refused unless it is UTF-8.
     *
     * @param f the file
     * @return the text
     * @throws IOException if it cannot be read or is not UTF-8
     */
    static String readUtf8(Path f) throws IOException {
        byte[] bytes = Files.readAllBytes(f);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IOException(
                    f
                            + ": expected UTF-8 text, got bytes that are not (a binary file, or"
                            + " another encoding?)",
                    e);
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /**
     * A chunk record on the wire: no vector (the collection embeds the text), no tenant (the
     * token's).
     *
     * @param r a chunk as the chunker made it (integer metadata only)
     * @return the record
     */
    static Record record(VectorRecord r) {
        Record.Builder b =
                Record.newBuilder()
                        .setId(r.id())
                        .setText(r.text())
                        .setSource(
                                SourceRef.newBuilder()
                                        .setKind(r.source().kind())
                                        .setId(r.source().id())
                                        .setVersion(r.source().version()));
        if (r.subject() != null) {
            b.setSubject(r.subject());
        }
        r.metadata()
                .forEach(
                        (k, v) ->
                                b.putMetadata(k, Value.newBuilder().setIntValue((Long) v).build()));
        return b.build();
    }
}
