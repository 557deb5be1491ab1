package dev.nepenthe.bench.suite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Which code a section was measured on: the working tree's commit, asked of git, so that a figure
 * in the document can be traced to the code that produced it.
 */
final class SuiteCommit {

    private SuiteCommit() {}

    /**
     * The working tree's commit, "with uncommitted changes" when files other than the suite's own
     * output (the document, the plots) differ from it, or "unknown" outside a git checkout.
     */
    static String of(Path doc, Path plots) {
        try {
            String head = git("rev-parse", "--short", "HEAD");
            if (head == null || !head.matches("[0-9a-f]{4,40}")) {
                return "unknown";
            }
            String top = git("rev-parse", "--show-toplevel");
            String changes = git("status", "--porcelain", "--untracked-files=no");
            if (top == null || changes == null) {
                return head + " (its changes unknown)";
            }
            Path root = Path.of(top);
            Path ownDoc = doc.toAbsolutePath().normalize();
            Path ownPlots = plots.toAbsolutePath().normalize();
            boolean others =
                    changes.lines()
                            .filter(l -> l.length() > 3)
                            .map(l -> root.resolve(l.substring(3)).normalize())
                            .anyMatch(f -> !f.equals(ownDoc) && !f.startsWith(ownPlots));
            return others ? head + " with uncommitted changes" : head;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static String git(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        Process git = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out =
                new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                        .stripTrailing();
        return git.waitFor() == 0 ? out : null;
    }
}
