"""The BITE recipe scheme's intrinsic metrics use the scheme's own tagger and pretokeniser (a ``--bite-tagger
hanta`` row reported coverage computed with NLTK and Moses) and report the round trip of both modes."""
from preprocess.schemes.bite import BiteOptions
from train_scripts.schemes import make_scheme


def test_intrinsic_uses_the_schemes_tagger_and_reports_round_trips(tmp_path, monkeypatch):
    from preprocess.evaluate import bite as bite_eval
    from preprocess.models import spm

    calls = {}

    def record(name, result):
        def fake(*args, **kwargs):
            calls[name] = (args, kwargs)
            return result
        return fake

    cov = {"types_unencoded": 1, "types_bite": 1, "coverage_unencoded": 1.0, "coverage_bite": 1.0}
    monkeypatch.setattr(bite_eval, "coverage_report", record("coverage", cov))
    monkeypatch.setattr(bite_eval, "model_complexity", record("complexity", 0.5))
    monkeypatch.setattr(bite_eval, "sequence_lengths", record("lengths", {}))
    trip = {"sentences": 2, "unchanged": 2, "rate": 1.0, "examples": []}
    monkeypatch.setattr(bite_eval, "round_trip_report", record("round_trip", {"default": trip, "exact": trip}))
    monkeypatch.setattr(spm, "train", record("train", str(tmp_path / "b.model")))
    scheme = make_scheme({"scheme": "bite", "bite_tagger": "hanta", "bite_pretokenizer": "whitespace"},
                         ("en", "de"), str(tmp_path))
    raw = {"train.en": ["He walks ."], "train.de": ["Er geht ."], "test.en": ["She sleeps .", "Dogs run ."]}
    out = scheme.intrinsic(raw, None)
    # the scheme's BITE options, passed whole (preprocess.schemes.bite.BiteOptions)
    for name in ("coverage", "lengths", "round_trip"):
        args, kwargs = calls[name]
        (options,) = [a for a in (*args, *kwargs.values()) if isinstance(a, BiteOptions)]
        assert (options.bite_tagger, options.bite_pretokenizer) == ("hanta", "whitespace"), name
    assert calls["round_trip"][0][0] == raw["test.en"]
    assert out["round_trip"]["exact"] == {"sentences": 2, "unchanged": 2, "rate": 1.0}
