package dev.nepenthe.bench.text;

import com.google.errorprone.annotations.FormatMethod;
import com.google.errorprone.annotations.FormatString;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * The harness's Markdown: printed to stdout as each part is done, and, when a file is named,
 * rewritten whole after each part (through a temporary file and a rename), so a run that dies late
 * still leaves the tables it finished.
 */
final class Report {

    private final StringBuilder md = new StringBuilder();
    private final Path file;
    private int printed;

    /**
     * @param file where the Markdown is also written, or null for stdout only
     */
    Report(Path file) {
        this.file = file;
    }

    Report line(String s) {
        md.append(s).append('\n');
        return this;
    }

    @FormatMethod
    Report line(@FormatString String format, Object... args) {
        return line(String.format(Locale.ROOT, format, args));
    }

    Report blank() {
        return line("");
    }

    /** A fenced block holding the command, as the tables in docs/BENCHMARKS.md are introduced. */
    Report command(String command) {
        return line("```").line(command).line("```").blank();
    }

    /** Prints what was added since the last flush and rewrites the file. */
    void flush() {
        System.out.print(md.substring(printed));
        System.out.flush();
        printed = md.length();
        if (file != null) {
            try {
                Path parent = file.toAbsolutePath().getParent();
                Files.createDirectories(parent);
                Path tmp = parent.resolve(file.getFileName() + ".tmp");
                Files.writeString(tmp, md, StandardCharsets.UTF_8);
                Files.move(
                        tmp,
                        file,
                        StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                throw new UncheckedIOException("out=" + file + ": writing the Markdown failed", e);
            }
        }
    }
}
