package dev.nepenthe.embed.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The folder one of Nepenthe's shipped examples ({@code nepenthe demo}, {@code nepenthe rag}) owns:
 * wiped at the start of every run, so it must be new or carry the example's marker. Both examples
 * embed with the bundled model and so both depend on this module; the rule that keeps them from
 * wiping a folder of the user's lives here once.
 */
public final class ExampleFolder {

    private ExampleFolder() {}

    /**
     * Empties the folder (or makes it) and marks it as the example's.
     *
     * @param folder the folder the example was given
     * @param marker the marker file's name ({@code ".nepenthe-demo"})
     * @param example what the example is called in messages ({@code "the demo"})
     * @param command the command that runs it, written into the marker ({@code "nepenthe demo"})
     * @throws IllegalArgumentException if the folder holds files and no marker
     * @throws IOException if the folder cannot be read, emptied or written
     */
    public static void prepare(Path folder, String marker, String example, String command)
            throws IOException {
        Path mark = folder.resolve(marker);
        if (Files.exists(folder)) {
            boolean empty;
            try (Stream<Path> s = Files.list(folder)) {
                empty = s.findAny().isEmpty();
            }
            if (!empty && !Files.exists(mark)) {
                throw new IllegalArgumentException(
                        "folder "
                                + folder.toAbsolutePath()
                                + " exists and was not made by "
                                + example
                                + "; expected a new folder ("
                                + example
                                + " wipes its folder on each run)");
            }
            try (Stream<Path> walk = Files.walk(folder)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    if (!p.equals(folder)) {
                        Files.delete(p);
                    }
                }
            }
        }
        Files.createDirectories(folder);
        Files.writeString(mark, "made by '" + command + "'; wiped on each run\n");
    }
}
