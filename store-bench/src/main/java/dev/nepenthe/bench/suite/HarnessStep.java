package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.suite.BenchSuite.Context;
import dev.nepenthe.bench.suite.BenchSuite.Step;
import dev.nepenthe.testing.ChildJvm;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

/**
 * A harness in a JVM of its own (this JVM's flags and class path), as {@code ./nepenthe bench} runs
 * it: its standard output, the tables, becomes the section; its standard error is the progress,
 * passed through. A harness of the server module runs on the server's class path instead, which the
 * launcher passes in {@code -D}{@value #SERVER_CLASS_PATH} (this module's own holds only what the
 * benchmarks need).
 */
record HarnessStep(
        String name,
        String title,
        String what,
        String bench,
        String mainClass,
        Function<Context, List<String>> args,
        List<String> plots)
        implements Step {

    /** The system property that holds the server module's class path. */
    static final String SERVER_CLASS_PATH = "nepenthe.suite.serverClasspath";

    @Override
    public String run(Context c) throws Exception {
        List<String> cmd = ChildJvm.command(null);
        cmd.add("-cp");
        if (!mainClass.startsWith("dev.nepenthe.server.")) {
            cmd.add(System.getProperty("java.class.path"));
        } else {
            String cp = System.getProperty(SERVER_CLASS_PATH, "");
            if (cp.isEmpty()) {
                throw new IllegalStateException(
                        name
                                + ": expected the class path of "
                                + mainClass
                                + " in -D"
                                + SERVER_CLASS_PATH
                                + " (./nepenthe bench all builds it and sets it), found none");
            }
            cmd.add(cp);
        }
        cmd.add(mainClass);
        List<String> harnessArgs = args.apply(c);
        cmd.addAll(harnessArgs);
        System.out.println("suite: " + mainClass + " " + String.join(" ", harnessArgs));
        Process proc =
                new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        proc.getOutputStream().close();
        String out = tee(proc.getInputStream(), System.out);
        int rc = proc.waitFor();
        if (rc != 0) {
            throw new IllegalStateException(mainClass + " exited with " + rc);
        }
        StringBuilder body =
                new StringBuilder(
                        "The harness alone: `./nepenthe bench "
                                + bench
                                + " "
                                + String.join(" ", harnessArgs)
                                + "`.\n\n");
        // The harness's own headings sit one level below the step's.
        body.append(out.replaceAll("(?m)^(#{2,5}) ", "$1# "));
        for (String plot : plots) {
            Path png = c.plots().resolve(plot);
            if (!Files.isRegularFile(png)) {
                throw new IllegalStateException(mainClass + " wrote no plot " + png);
            }
            body.append("\n![").append(title).append("](").append(c.link(png)).append(")\n");
        }
        return body.toString();
    }

    private static String tee(InputStream in, OutputStream echo) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int r; (r = in.read(buf)) > 0; ) {
            all.write(buf, 0, r);
            echo.write(buf, 0, r);
        }
        echo.flush();
        return all.toString(StandardCharsets.UTF_8);
    }
}
