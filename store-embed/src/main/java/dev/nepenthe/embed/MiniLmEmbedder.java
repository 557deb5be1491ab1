package dev.nepenthe.embed;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import java.util.ArrayList;
import java.util.List;

/**
 * The embedded default embedder: all-MiniLM-L6-v2 (384 dimensions, unit-length vectors) as bundled
 * by langchain4j, run in-process with ONNX Runtime. The model ships inside the jar, so nothing is
 * downloaded and nothing leaves the machine. Loading the model costs time and heap (figures in
 * docs/BENCHMARKS.md), so make one and share it: one instance is safe to share between threads.
 */
public final class MiniLmEmbedder implements Embedder {

    public static final int DIMENSION = 384;

    /** The name collections record ({@code CollectionSpec.withEmbedder(MiniLmEmbedder.NAME)}). */
    public static final String NAME = "all-minilm-l6-v2";

    static {
        // DJL, which runs the tokenizer, reports usage to its makers when it thinks it runs on
        // EC2 unless told not to. Set before any DJL class loads, so embedding Nepenthe as a
        // library without the launcher's flags is just as quiet.
        NoPhoneHome.apply();
    }

    private final AllMiniLmL6V2EmbeddingModel model = new AllMiniLmL6V2EmbeddingModel();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int dimension() {
        return DIMENSION;
    }

    @Override
    public float[] embed(String text) {
        return model.embed(text).content().vector();
    }

    /** Embeds a batch on every core: langchain4j embeds the texts of a batch in parallel. */
    @Override
    public List<float[]> embedAll(List<String> texts) {
        List<TextSegment> segments = new ArrayList<>(texts.size());
        for (String t : texts) {
            segments.add(TextSegment.from(t));
        }
        List<float[]> out = new ArrayList<>(texts.size());
        model.embedAll(segments).content().forEach(e -> out.add(e.vector()));
        return out;
    }
}
