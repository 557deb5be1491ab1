package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.data.GcideDataset;
import dev.nepenthe.bench.suite.BenchSuite.Context;
import dev.nepenthe.bench.suite.BenchSuite.Profile;
import dev.nepenthe.bench.suite.BenchSuite.Step;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The real-embedding comparison: builds the gcide cache first when it is missing (in a JVM of its
 * own, as {@code ./nepenthe bench dataset-gcide} does), then runs its harness.
 */
record GcideStep(HarnessStep harness) implements Step {
    @Override
    public String name() {
        return harness.name();
    }

    @Override
    public String title() {
        return harness.title();
    }

    @Override
    public String what() {
        return harness.what();
    }

    @Override
    public boolean runsIn(Profile p) {
        return p.name().equals("full");
    }

    @Override
    public String run(Context c) throws Exception {
        Path cache = GcideDataset.defaultFile();
        if (!Files.isRegularFile(cache)) {
            System.out.println(
                    "suite: no gcide vectors at " + cache + "; embedding the definitions once");
            new HarnessStep(
                            "dataset-gcide",
                            "",
                            "",
                            "dataset-gcide",
                            "dev.nepenthe.bench.data.GcideDataset",
                            x -> List.of(),
                            List.of())
                    .run(c);
        }
        return harness.run(c);
    }
}
