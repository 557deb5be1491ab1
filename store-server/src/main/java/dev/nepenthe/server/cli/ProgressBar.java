package dev.nepenthe.server.cli;

import java.io.Console;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * A one-line progress report on a terminal, redrawn in place ({@code \r}) at most every {@link
 * #REDRAW_NANOS}: a bar and percentage, records so far, records per second and time left when the
 * total size is known (bytes read against the file's size, so no counting pass over the file
 * first); records and rate alone when it is not (standard input). {@link #finish} wipes the line so
 * the summary printed after it starts clean.
 *
 * <p>Whether to draw at all is decided by the caller with {@link #stderrIsTerminal}: a log file or
 * a pipe should not fill up with carriage returns.
 */
final class ProgressBar {

    static final long REDRAW_NANOS = 200_000_000L;
    private static final int WIDTH = 24;

    private final PrintWriter err;

    /** What is counted: "records" (JSON Lines), "chunks" (a folder of documents). */
    private final String unit;

    private final long totalBytes;
    private final LongSupplier clock;
    private final long start;

    /** The first draw waits a redraw interval too: a rate over the first few records is noise. */
    private long lastDraw;

    private int lastLength;

    /**
     * @param totalBytes the input's size, or a negative number when unknown
     * @param clock nanoseconds (System::nanoTime; a test passes its own)
     */
    ProgressBar(PrintWriter err, long totalBytes, LongSupplier clock) {
        this(err, "records", totalBytes, clock);
    }

    /**
     * @param unit what the count counts, plural ("chunks")
     * @param totalBytes the input's size, or a negative number when unknown
     * @param clock nanoseconds
     */
    ProgressBar(PrintWriter err, String unit, long totalBytes, LongSupplier clock) {
        this.err = err;
        this.unit = unit;
        this.totalBytes = totalBytes;
        this.clock = clock;
        this.start = clock.getAsLong();
        this.lastDraw = start;
    }

    /** Redraws if the last draw is old enough; cheap to call for every record (or chunk). */
    void update(long records, long bytesRead) {
        long now = clock.getAsLong();
        if (now - lastDraw < REDRAW_NANOS) {
            return;
        }
        lastDraw = now;
        String line = render(records, bytesRead, now - start);
        // Pad over what the previous line left, then return to the start of the line.
        err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        err.flush();
        lastLength = line.length();
    }

    /** Wipes the bar (when one was drawn). */
    void finish() {
        if (lastLength > 0) {
            err.print("\r" + " ".repeat(lastLength) + "\r");
            err.flush();
            lastLength = 0;
        }
    }

    String render(long records, long bytesRead, long elapsedNanos) {
        double seconds = elapsedNanos / 1e9;
        double rate = seconds > 0 ? records / seconds : 0;
        StringBuilder s = new StringBuilder();
        if (totalBytes > 0) {
            double done = Math.min(1, (double) bytesRead / totalBytes);
            int filled = (int) Math.round(done * WIDTH);
            s.append('[')
                    .append("#".repeat(filled))
                    .append(".".repeat(WIDTH - filled))
                    .append("] ")
                    .append(String.format(Locale.ROOT, "%3d%%  ", (int) Math.floor(done * 100)));
            s.append(String.format(Locale.ROOT, "%,d %s  %,.0f/s", records, unit, rate));
            if (done > 0 && seconds > 0.5) {
                s.append("  ")
                        .append(clock((long) Math.ceil(seconds * (1 - done) / done)))
                        .append(" left");
            }
        } else {
            s.append(String.format(Locale.ROOT, "%,d %s  %,.0f/s", records, unit, rate));
        }
        return s.toString();
    }

    private static String clock(long seconds) {
        return seconds >= 3600
                ? String.format(
                        Locale.ROOT,
                        "%d:%02d:%02d",
                        seconds / 3600,
                        seconds / 60 % 60,
                        seconds % 60)
                : String.format(Locale.ROOT, "%d:%02d", seconds / 60, seconds % 60);
    }

    /**
     * Whether standard error is a terminal. On Linux, /proc says where file descriptor 2 points;
     * elsewhere the JDK's console is asked (which looks at standard input and output, the best it
     * can tell).
     */
    static boolean stderrIsTerminal() {
        Path fd2 = Path.of("/proc/self/fd/2");
        try {
            if (Files.exists(Path.of("/proc/self/fd"))) {
                String target = Files.readSymbolicLink(fd2).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            }
        } catch (Exception e) {
            return false;
        }
        return consoleIsTerminal();
    }

    // The JDK still documents a null console (a JVM with none at all); isTerminal() says whether
    // the one there is a terminal.
    @SuppressWarnings("SystemConsoleNull")
    private static boolean consoleIsTerminal() {
        Console c = System.console();
        return c != null && c.isTerminal();
    }
}
