package io.dlion.monitor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict parser of Prometheus's text exposition format 0.0.4 (what a Prometheus server reads from {@code /metrics}),
 * written from the format's specification for the tests: every line is a {@code # HELP}, a {@code # TYPE} or a sample;
 * every sample belongs to the family of the last {@code # TYPE} with the suffixes its type allows; a family is declared
 * once; label values are quoted with the three escapes; a value is a float, {@code +Inf}, {@code -Inf} or {@code NaN}.
 * Anything else throws.
 */
final class TextFormat {
    record Sample(String name, Map<String, String> labels, double value) {
    }

    final Map<String, String> types = new LinkedHashMap<>();
    final List<Sample> samples = new ArrayList<>();

    static TextFormat parse(final String text) {
        final TextFormat f = new TextFormat();
        String family = null;
        final Map<String, Boolean> helped = new HashMap<>();
        int lineNo = 0;
        for (final String line : text.split("\n", -1)) {
            lineNo++;
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("# HELP ")) {
                final String name = line.substring(7).split(" ", 2)[0];
                check(helped.put(name, true) == null, lineNo, "second HELP for " + name);
                continue;
            }
            if (line.startsWith("# TYPE ")) {
                final String[] parts = line.substring(7).split(" ");
                check(parts.length == 2, lineNo, "TYPE needs a name and a type: " + line);
                check(List.of("counter", "gauge", "histogram", "summary", "untyped").contains(parts[1]), lineNo, "unknown type " + parts[1]);
                check(f.types.put(parts[0], parts[1]) == null, lineNo, "second TYPE for " + parts[0]);
                family = parts[0];
                continue;
            }
            check(!line.startsWith("#"), lineNo, "unknown comment kind: " + line);
            final Sample s = sample(line, lineNo);
            check(family != null && belongs(s.name(), family, f.types.get(family)), lineNo,
                "sample " + s.name() + " outside its family (last TYPE: " + family + ")");
            f.samples.add(s);
        }
        return f;
    }

    private static boolean belongs(final String name, final String family, final String type) {
        final String suffix = name.startsWith(family) ? name.substring(family.length()) : null;
        if (suffix == null) {
            return false;
        }
        switch (type) {
            case "counter":
                return suffix.equals("_total") || suffix.equals("_created") || suffix.isEmpty();
            case "histogram":
                return List.of("_bucket", "_count", "_sum", "_created").contains(suffix);
            case "summary":
                return List.of("", "_count", "_sum", "_created").contains(suffix);
            default:
                return suffix.isEmpty();
        }
    }

    private static Sample sample(final String line, final int lineNo) {
        int i = 0;
        while (i < line.length() && (Character.isLetterOrDigit(line.charAt(i)) || line.charAt(i) == '_' || line.charAt(i) == ':')) {
            i++;
        }
        final String name = line.substring(0, i);
        check(!name.isEmpty() && !Character.isDigit(name.charAt(0)), lineNo, "bad metric name: " + line);
        final Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (line.charAt(i) != '}') {
                final int eq = line.indexOf('=', i);
                check(eq > i, lineNo, "bad label: " + line);
                final String label = line.substring(i, eq);
                check(label.matches("[a-zA-Z_][a-zA-Z0-9_]*"), lineNo, "bad label name " + label);
                check(line.charAt(eq + 1) == '"', lineNo, "unquoted label value: " + line);
                final StringBuilder value = new StringBuilder();
                int j = eq + 2;
                for (; line.charAt(j) != '"'; j++) {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        final char e = line.charAt(++j);
                        check(e == '\\' || e == '"' || e == 'n', lineNo, "bad escape \\" + e);
                        c = e == 'n' ? '\n' : e;
                    }
                    value.append(c);
                }
                check(labels.put(label, value.toString()) == null, lineNo, "label twice: " + label);
                i = j + 1;
                if (line.charAt(i) == ',') {
                    i++;
                }
            }
            i++;
        }
        check(i < line.length() && line.charAt(i) == ' ', lineNo, "no value: " + line);
        final String[] rest = line.substring(i + 1).split(" ");
        check(rest.length <= 2, lineNo, "trailing text: " + line);
        final double value;
        switch (rest[0]) {
            case "+Inf":
                value = Double.POSITIVE_INFINITY;
                break;
            case "-Inf":
                value = Double.NEGATIVE_INFINITY;
                break;
            case "NaN":
                value = Double.NaN;
                break;
            default:
                value = Double.parseDouble(rest[0]);
        }
        if (rest.length == 2) {
            Long.parseLong(rest[1]);
        }
        return new Sample(name, labels, value);
    }

    /**
     * @return the value of the one sample with this name and these labels (and maybe more).
     */
    double value(final String name, final String... labelPairs) {
        final List<Sample> found = find(name, labelPairs);
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples of " + name + " " + List.of(labelPairs) + ", want 1");
        }
        return found.get(0).value();
    }

    List<Sample> find(final String name, final String... labelPairs) {
        final List<Sample> out = new ArrayList<>();
        for (final Sample s : samples) {
            boolean match = s.name().equals(name);
            for (int k = 0; match && k < labelPairs.length; k += 2) {
                match = labelPairs[k + 1].equals(s.labels().get(labelPairs[k]));
            }
            if (match) {
                out.add(s);
            }
        }
        return out;
    }

    private static void check(final boolean ok, final int line, final String message) {
        if (!ok) {
            throw new IllegalArgumentException("line " + line + ": " + message);
        }
    }
}
