package dev.nepenthe.server.cli;

import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.server.Demo;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nepenthe demo}: the main job on the embedded default, told as it goes (see {@link Demo}).
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description =
                "Build a store under DIR (wiped on each run), load a small corpus of memories,"
                    + " search it, snapshot it, forget one person, scan the folder for their notes,"
                    + " verify the signed receipt and show that restoring the snapshot does not"
                    + " bring them back.")
public final class DemoCommand implements Callable<Integer> {

    @Option(
            names = "--data",
            paramLabel = "DIR",
            defaultValue = "demo-data",
            description = "Folder (default: ${DEFAULT-VALUE}).")
    Path data;

    @Option(
            names = "--index",
            paramLabel = "KIND",
            defaultValue = "exact",
            description = "exact, hnsw or ivfpq (default: ${DEFAULT-VALUE}).")
    String index;

    @Override
    public Integer call() throws Exception {
        new Demo(data, new MiniLmEmbedder(), index, System.out).run();
        return 0;
    }
}
