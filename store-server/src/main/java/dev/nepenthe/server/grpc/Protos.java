package dev.nepenthe.server.grpc;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Provenance;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.Value;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Translation between the wire messages and the store's types, in both directions. Bad input is
 * refused here with an {@link IllegalArgumentException} that names the field, what was expected and
 * what arrived (the server turns it into INVALID_ARGUMENT); what the store checks itself
 * (dimension, finite values, sizes) is left to the store, so there is one rule and one message.
 */
final class Protos {

    private Protos() {}

    // ---- records ----------------------------------------------------------------------------

    static VectorRecord record(Record r, String tenant, int position) {
        VectorRecord.Builder b = VectorRecord.builder(r.getId()).tenant(tenant);
        if (!r.getSubject().isEmpty()) {
            b.subject(r.getSubject());
        }
        if (r.hasSource()) {
            if (!r.getSource().hasVersion()) {
                throw new IllegalArgumentException(
                        "record " + position + ": source: expected a version, got none");
            }
            b.source(
                    new SourceRef(
                            r.getSource().getKind(),
                            r.getSource().getId(),
                            r.getSource().getVersion()));
        }
        if (r.getVectorCount() > 0) {
            b.vector(floats(r.getVectorList()));
        }
        if (!r.getText().isEmpty()) {
            b.text(r.getText());
        }
        for (Map.Entry<String, Value> e : r.getMetadataMap().entrySet()) {
            b.metadata(
                    e.getKey(),
                    value(e.getValue(), "record " + position + ": metadata '" + e.getKey() + "'"));
        }
        if (r.getDerivedFromCount() > 0) {
            b.derivedFrom(r.getDerivedFromList());
        }
        return b.build();
    }

    static Record record(VectorRecord r) {
        return record(r, true);
    }

    static Record record(VectorRecord r, boolean withVector) {
        Record.Builder b = Record.newBuilder().setId(r.id());
        if (r.subject() != null) {
            b.setSubject(r.subject());
        }
        if (r.source() != null) {
            b.setSource(
                    dev.nepenthe.grpc.v1.SourceRef.newBuilder()
                            .setKind(r.source().kind())
                            .setId(r.source().id())
                            .setVersion(r.source().version()));
        }
        float[] v = withVector ? r.vector() : null;
        if (v != null) {
            for (float x : v) {
                b.addVector(x);
            }
        }
        if (r.text() != null) {
            b.setText(r.text());
        }
        new TreeMap<>(r.metadata()).forEach((k, val) -> b.putMetadata(k, value(val)));
        b.addAllDerivedFrom(r.derivedFrom());
        return b.build();
    }

    static float[] floats(List<Float> list) {
        float[] out = new float[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.get(i);
        }
        return out;
    }

    static Object value(Value v, String where) {
        return switch (v.getKindCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> v.getIntValue();
            case DOUBLE_VALUE -> v.getDoubleValue();
            case BOOL_VALUE -> v.getBoolValue();
            case KIND_NOT_SET ->
                    throw new IllegalArgumentException(
                            where
                                    + ": expected a string, integer, double or"
                                    + " boolean value, got an empty Value");
        };
    }

    static Value value(Object o) {
        return switch (o) {
            case String s -> Value.newBuilder().setStringValue(s).build();
            case Long l -> Value.newBuilder().setIntValue(l).build();
            case Double d -> Value.newBuilder().setDoubleValue(d).build();
            case Boolean b -> Value.newBuilder().setBoolValue(b).build();
            default ->
                    throw new IllegalStateException(
                            "metadata value of type " + o.getClass().getName());
        };
    }

    static dev.nepenthe.grpc.v1.SearchHit hit(SearchHit h, boolean withVector) {
        return dev.nepenthe.grpc.v1.SearchHit.newBuilder()
                .setRecord(record(h.record(), withVector))
                .setScore(h.score())
                .build();
    }

    // ---- filters and params -----------------------------------------------------------------

    static Filter filter(dev.nepenthe.grpc.v1.Filter f, String where) {
        return switch (f.getKindCase()) {
            case EQ -> Filter.eq(f.getEq().getKey(), value(f.getEq().getValue(), where + ".eq"));
            case IN -> {
                if (f.getIn().getValuesCount() == 0) {
                    throw new IllegalArgumentException(
                            where + ".in: expected at least one value, got none");
                }
                Object[] values = new Object[f.getIn().getValuesCount()];
                for (int i = 0; i < values.length; i++) {
                    values[i] = value(f.getIn().getValues(i), where + ".in[" + i + "]");
                }
                yield Filter.in(f.getIn().getKey(), values);
            }
            case RANGE ->
                    Filter.range(
                            f.getRange().getKey(), f.getRange().getMin(), f.getRange().getMax());
            case EXISTS -> Filter.exists(f.getExists().getKey());
            case NOT -> Filter.not(filter(f.getNot().getFilter(), where + ".not"));
            case ALL -> new Filter.And(filters(f.getAll().getFiltersList(), where + ".all"));
            case ANY -> new Filter.Or(filters(f.getAny().getFiltersList(), where + ".any"));
            case KIND_NOT_SET ->
                    throw new IllegalArgumentException(
                            where
                                    + ": expected eq, in, range, exists, not, all"
                                    + " or any, got an empty Filter");
        };
    }

    private static List<Filter> filters(List<dev.nepenthe.grpc.v1.Filter> list, String where) {
        if (list.isEmpty()) {
            throw new IllegalArgumentException(where + ": expected at least one filter, got none");
        }
        List<Filter> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            out.add(filter(list.get(i), where + "[" + i + "]"));
        }
        return out;
    }

    static SearchParams params(Map<String, String> params) {
        Map<String, Integer> values = new TreeMap<>();
        params.forEach(
                (k, v) -> {
                    try {
                        values.put(k, Integer.parseInt(v.trim()));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(
                                "params '" + k + "': expected an integer, got '" + v + "'");
                    }
                });
        return new SearchParams(values);
    }

    // ---- collections ------------------------------------------------------------------------

    static CollectionSpec spec(dev.nepenthe.grpc.v1.CollectionSpec s) {
        Metric metric =
                switch (s.getMetric()) {
                    case COSINE -> Metric.COSINE;
                    case DOT -> Metric.DOT;
                    case L2 -> Metric.L2;
                    case METRIC_UNSPECIFIED, UNRECOGNIZED ->
                            throw new IllegalArgumentException(
                                    "spec.metric: expected COSINE,"
                                            + " DOT or L2, got "
                                            + s.getMetric());
                };
        String kind = s.getIndexKind().isEmpty() ? "exact" : s.getIndexKind();
        CollectionSpec spec =
                new CollectionSpec(
                        s.getName(),
                        s.getDimension(),
                        metric,
                        IndexSpec.of(kind, s.getIndexParamsMap()));
        // Empty strings are proto3's "not set": no text index, no embedder.
        spec =
                spec.withTextIndex(s.getTextAnalyzer().isEmpty() ? null : s.getTextAnalyzer())
                        .withEmbedder(s.getEmbedder().isEmpty() ? null : s.getEmbedder())
                        .withSubjectIdentifiers(
                                s.getSubjectIdentifiersList().toArray(String[]::new));
        return switch (s.getProvenance()) {
            case REGENERATE -> spec.withProvenance(CollectionSpec.Provenance.REGENERATE);
            case CASCADE, PROVENANCE_UNSPECIFIED ->
                    spec.withProvenance(CollectionSpec.Provenance.CASCADE);
            case UNRECOGNIZED ->
                    throw new IllegalArgumentException(
                            "spec.provenance: expected CASCADE or REGENERATE, got"
                                    + " an unknown value");
        };
    }

    static dev.nepenthe.grpc.v1.CollectionSpec spec(CollectionSpec s) {
        return dev.nepenthe.grpc.v1.CollectionSpec.newBuilder()
                .setName(s.name())
                .setDimension(s.dimension())
                .setMetric(dev.nepenthe.grpc.v1.Metric.valueOf(s.metric().name()))
                .setIndexKind(s.index().kind())
                .putAllIndexParams(s.index().params())
                .setProvenance(Provenance.valueOf(s.provenance().name()))
                .setTextAnalyzer(s.textAnalyzer() == null ? "" : s.textAnalyzer())
                .setEmbedder(s.embedder() == null ? "" : s.embedder())
                .addAllSubjectIdentifiers(s.subjectIdentifiers())
                .build();
    }

    // ---- search -----------------------------------------------------------------------------

    /**
     * The store's query for a wire request, in the caller's tenant; see the proto's SearchMode for
     * how an unspecified mode is read. What the store checks itself (dimension, k's range, blank or
     * long text, a text index or embedder the collection lacks) is left to it.
     */
    static SearchRequest search(dev.nepenthe.grpc.v1.SearchRequest r, String tenant) {
        boolean hasVector = r.getVectorCount() > 0;
        boolean hasText = !r.getText().isEmpty();
        @SuppressWarnings("deprecation")
        boolean hybridFlag = r.getHybrid();
        SearchRequest.Mode mode =
                switch (r.getMode()) {
                    case VECTOR -> SearchRequest.Mode.VECTOR;
                    case KEYWORD -> SearchRequest.Mode.KEYWORD;
                    case HYBRID -> SearchRequest.Mode.HYBRID;
                    case SEARCH_MODE_UNSPECIFIED -> {
                        if (hybridFlag) {
                            yield SearchRequest.Mode.HYBRID;
                        }
                        if (hasVector && hasText) {
                            throw new IllegalArgumentException(
                                    "mode: expected VECTOR, KEYWORD or HYBRID when both a vector"
                                            + " and text are given, got none (a vector search would"
                                            + " ignore the text)");
                        }
                        yield SearchRequest.Mode.VECTOR;
                    }
                    case UNRECOGNIZED ->
                            throw new IllegalArgumentException(
                                    "mode: expected VECTOR, KEYWORD or HYBRID, got an"
                                            + " unknown value "
                                            + r.getModeValue());
                };
        if (hybridFlag && mode != SearchRequest.Mode.HYBRID) {
            throw new IllegalArgumentException(
                    "hybrid: the deprecated flag asks for mode HYBRID, got it with mode "
                            + r.getMode());
        }
        switch (mode) {
            case VECTOR -> {
                if (!hasVector && !hasText) {
                    throw new IllegalArgumentException(
                            "vector: expected a query vector (or text for the collection's"
                                    + " embedder), got neither");
                }
                if (hasVector && hasText) {
                    throw new IllegalArgumentException(
                            "mode VECTOR: expected a vector or text, got both (mode HYBRID"
                                    + " searches by both)");
                }
            }
            case KEYWORD -> {
                if (!hasText) {
                    throw new IllegalArgumentException(
                            "mode KEYWORD: expected query text, got none");
                }
                if (hasVector) {
                    throw new IllegalArgumentException(
                            "mode KEYWORD: expected text and no vector, got a vector too"
                                    + " (mode HYBRID uses both)");
                }
            }
            case HYBRID -> {
                if (!hasText) {
                    throw new IllegalArgumentException(
                            "mode HYBRID: expected query text, got none");
                }
            }
        }
        SearchRequest q =
                new SearchRequest(
                        hasVector ? floats(r.getVectorList()) : null,
                        hasText ? r.getText() : null,
                        mode,
                        r.getK(),
                        tenant,
                        r.getSubject().isEmpty() ? null : r.getSubject(),
                        r.hasFilter() ? filter(r.getFilter(), "filter") : null,
                        params(r.getParamsMap()));
        return q;
    }

    // ---- forget -----------------------------------------------------------------------------

    static ForgetScope scope(dev.nepenthe.grpc.v1.ForgetScope s) {
        return switch (s.getKindCase()) {
            case SUBJECT -> ForgetScope.subject(s.getSubject());
            case RECORDS -> {
                Set<String> ids = new LinkedHashSet<>(s.getRecords().getIdsList());
                yield ForgetScope.records(ids);
            }
            case SOURCE ->
                    s.getSource().hasVersion()
                            ? ForgetScope.source(
                                    s.getSource().getKind(),
                                    s.getSource().getId(),
                                    s.getSource().getVersion())
                            : ForgetScope.source(s.getSource().getKind(), s.getSource().getId());
            case METADATA -> ForgetScope.metadata(filter(s.getMetadata(), "scope.metadata"));
            case KIND_NOT_SET ->
                    throw new IllegalArgumentException(
                            "scope: expected subject, records, source or"
                                    + " metadata, got an empty ForgetScope");
        };
    }

    static ErasureLevel level(dev.nepenthe.grpc.v1.ErasureLevel l) {
        return switch (l) {
            case REBUILD -> ErasureLevel.REBUILD;
            case REPAIR, ERASURE_LEVEL_UNSPECIFIED -> ErasureLevel.REPAIR;
            case UNRECOGNIZED ->
                    throw new IllegalArgumentException(
                            "level: expected REPAIR or REBUILD, got an unknown value");
        };
    }

    static Operation operation(ForgetOperation op) {
        Operation.Builder b =
                Operation.newBuilder()
                        .setId(op.id())
                        .setState(op.state().name())
                        .setScopeKind(op.scopeKind())
                        .setScopeHash(op.scopeHash())
                        .setReasonCode(op.reasonCode())
                        .putAllForgotten(op.recordsForgotten())
                        .addAllHolds(op.holds())
                        .setSettled(op.state().isSettled());
        op.timeline().forEach((s, t) -> b.putTimelineMicros(s.name(), micros(t)));
        for (SurfaceOutcome o : op.surfaces()) {
            b.addSurfaces(
                    dev.nepenthe.grpc.v1.SurfaceOutcome.newBuilder()
                            .setSurface(o.surface())
                            .setErasureClass(o.erasureClass().name())
                            .setPurged(o.purged())
                            .setChecked(o.checked())
                            .addAllProblems(Redaction.paths(o.problems()))
                            .setResidual(o.residual() == null ? "" : Redaction.paths(o.residual()))
                            .setClean(o.clean()));
        }
        for (Suspect s : op.suspects()) {
            b.addSuspects(
                    dev.nepenthe.grpc.v1.Suspect.newBuilder()
                            .setReason(s.reason())
                            .setCollection(s.collection())
                            .setRecordId(s.recordId())
                            .setScore(s.score())
                            .setDetail(s.relatedTo() == null ? "" : s.relatedTo()));
        }
        if (op.receipt() != null) {
            b.setReceipt(op.receipt());
        }
        if (op.note() != null) {
            // A tenant reads it: the failure it may quote names server files (the log keeps them).
            b.setNote(Redaction.paths(op.note()));
        }
        if (op.outcome() != null) {
            b.setOutcome(op.outcome().name());
        }
        return b.build();
    }

    static dev.nepenthe.grpc.v1.Readmission readmission(dev.nepenthe.core.forget.Readmission r) {
        dev.nepenthe.grpc.v1.Readmission.Builder b =
                dev.nepenthe.grpc.v1.Readmission.newBuilder()
                        .setId(r.id())
                        .setScopeKind(r.scopeKind())
                        .setScopeHash(r.scopeHash())
                        .setReasonCode(r.reasonCode())
                        .setAtMicros(micros(r.at()))
                        .addAllForgetOperations(r.forgetOperations());
        if (r.ledgerEntry() != null) {
            b.setLedgerSeq(r.ledgerEntry().seq()).setLedgerHash(r.ledgerEntry().hash());
        }
        return b.build();
    }

    static dev.nepenthe.grpc.v1.LegalHold hold(LegalHold h) {
        return dev.nepenthe.grpc.v1.LegalHold.newBuilder()
                .setId(h.id())
                .setScopeKind(h.scopeKind())
                .setScopeHash(h.scopeHash())
                .setReasonCode(h.reasonCode())
                .setPlacedAtMillis(h.placedAt().toEpochMilli())
                .setLiftedAtMillis(h.liftedAt() == null ? 0 : h.liftedAt().toEpochMilli())
                .build();
    }

    /**
     * Microseconds since the epoch, as the wire carries instants (whole seconds, then the rest).
     */
    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }
}
