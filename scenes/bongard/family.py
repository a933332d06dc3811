"""The ``bongard`` family's declaration."""
from engine.family import Family, Setting

from .folders import check_problems
from .judge import read_answer

FAMILY = Family("bongard", "Bongard problems: 6 vs 6 concept problems in classic and aerial styles, real problems "
                           "from folders, collages, the seed's five prompting strategies and a judge.",
                reader=read_answer,
                settings=[Setting("problems", "a folder of real problems, one folder per problem holding left/ and "
                                              "right/ (6+ images each), optional test/left/ and test/right/, rule.txt "
                                              "(left rule, right rule) and optional category.txt; they become tasks "
                                              "bongard/real/<category>/<name>; empty: none", "",
                                  env="PROCVIS_BONGARD_PROBLEMS", check=check_problems, tasks="bongard/real/*")])
