package dev.nepenthe.server;

import java.nio.file.Path;

/** Command-line entry point: {@code nepenthe demo [--data DIR] [--index KIND]}. */
public final class Main {

    private static final String USAGE = """
            usage: nepenthe demo [--data DIR] [--index exact|hnsw|ivfpq]
              demo   build a store under DIR (default ./demo-data, wiped on each run), load a small
                     corpus of memories, search it, snapshot it, delete one person, scan the folder
                     for their notes and show that restoring the snapshot does not bring them back
            """;

    /**
     * The model's runtime (DJL) logs GPU probing at WARNING and Chronicle Map logs a banner at
     * INFO on every start; that is noise for a CPU-only embedded store. Held here so the levels
     * stick (java.util.logging keeps loggers only weakly).
     */
    private static final java.util.logging.Logger DJL_LOG = java.util.logging.Logger.getLogger("ai.djl");
    private static final java.util.logging.Logger CHRONICLE_LOG = java.util.logging.Logger.getLogger("net.openhft");

    private Main() {}

    public static void main(String[] args) throws Exception {
        DJL_LOG.setLevel(java.util.logging.Level.SEVERE);
        CHRONICLE_LOG.setLevel(java.util.logging.Level.WARNING);
        String command = args.length == 0 ? "demo" : args[0];
        Path data = Path.of("demo-data");
        String index = "exact";
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--data" -> data = Path.of(value(args, ++i, "--data"));
                case "--index" -> index = value(args, ++i, "--index");
                default -> fail("unknown option '" + args[i] + "'");
            }
        }
        switch (command) {
            case "demo" -> new Demo(data, new MiniLmEmbedder(), index, System.out).run();
            case "help", "--help", "-h" -> System.out.print(USAGE);
            default -> fail("unknown command '" + command + "'");
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            fail(option + " expects a value");
        }
        return args[i];
    }

    private static void fail(String message) {
        System.err.println("nepenthe: " + message);
        System.err.print(USAGE);
        System.exit(2);
    }
}
